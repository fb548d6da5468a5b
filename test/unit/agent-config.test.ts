import { describe, expect, it } from 'vitest';
import { agentConfig } from '../../src/agent/launcher.js';

describe("the agent's OpenCode config", () => {
  it('keeps the user config, sets the model, and turns autoupdate and sharing off', () => {
    const config = agentConfig({ provider: { x: {} }, autoupdate: true, share: 'auto' }, { providerID: 'x', modelID: 'm' });
    expect(config).toMatchObject({ provider: { x: {} }, model: 'x/m', autoupdate: false, share: 'disabled' });
  });

  it('denies questions and writes outside the checkout unless the user allows them', () => {
    expect(agentConfig({}, undefined).permission).toEqual({ external_directory: 'deny', question: 'deny' });
    expect(agentConfig({ permission: { external_directory: 'allow' } }, undefined).permission).toMatchObject({ external_directory: 'allow' });
  });

  it("denies the shell on a fork's code, whatever the user config says", () => {
    expect(agentConfig({ permission: { bash: 'allow' } }, undefined, true).permission).toMatchObject({ bash: 'deny' });
    expect(agentConfig({ permission: { bash: 'allow' } }, undefined, false).permission).toMatchObject({ bash: 'allow' });
  });
});
