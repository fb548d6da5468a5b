// The one bundle behind dist/main, dist/post and dist/cli (scripts/build.mjs, RFC-001 "The
// bundle"): each of those is a few lines that call one of these, so code the three share is in
// dist/ once. Each entry runs when its module is loaded.
export const main = () => import('./index.js');
export const post = () => import('./index-post.js');
export const cli = () => import('./cli/index.js');
