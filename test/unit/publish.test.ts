import { describe, expect, it } from 'vitest';
import { pushRefusal } from '../../src/publish/publish.js';

describe('why a push was refused', () => {
  it('names the cause and what to do, from what git and GitHub say', () => {
    expect(pushRefusal(' ! [rejected]        HEAD -> feature (fetch first)\nerror: failed to push some refs', 'feature')).toContain('the branch moved since the checkout');
    expect(pushRefusal('remote: Permission to octo-org/webapp.git denied to github-actions[bot].\nfatal: unable to access', 'feature')).toContain('permissions: contents: write');
    expect(pushRefusal('remote: error: GH006: Protected branch update failed for refs/heads/main.', 'main')).toContain('`main` is protected');
    expect(pushRefusal("! [remote rejected] HEAD -> feature (refusing to allow a GitHub App to create or update workflow `.github/workflows/ci.yml` without `workflows` permission)", 'feature')).toContain('.github/workflows');
    expect(pushRefusal('fatal: something else entirely', 'feature')).toBe('git said: fatal: something else entirely');
  });
});
