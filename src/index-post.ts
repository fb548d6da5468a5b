// The action's post step (action.yml runs dist/post/index.js). Most runs leave it nothing to do
// (main saved memory, replaced its "working" comment and installed no OpenCode to keep): that is decided from the step state main
// left, before the rest of the post step (0.76 MB of minified chunks) is loaded at all.
const pending = process.env.STATE_memory === 'pending' || Boolean(process.env['STATE_working-comment']) || Boolean(process.env['STATE_opencode-cache']);
if (pending) {
  void import('./post.js').then(({ run }) => run());
} else {
  console.log('Memory: nothing for the post step to do (main saved it, or never restored it).');
}
