// The sandbox rules attend install merges into Claude Code's settings (issue 20 §7): beside
// whatever the user has, once, and taken out again leaving the file exactly as it was.
import { describe, expect, it } from 'vitest';
import { AttendError } from '../../tools/wire/errors.js';
import { mergeSandboxRules, removeSandboxRules, rulePath, sandboxRulesFor, sandboxWarnings } from '../../tools/cli/commands/install-sandbox.js';

const rules = sandboxRulesFor({ settings: { env: { ATTEND_SIGNER: '127.0.0.1:23456' } }, keysDir: '/home/u/.config/attend/keys', root: '/home/u/.cache/attend', home: '/home/u' });

const users = () => ({
  env: { EDITOR: 'vim' },
  permissions: { allow: ['Bash(git status)'], deny: ['Read(./.env)'] },
  sandbox: { enabled: true, excludedCommands: ['docker'], network: { allowedDomains: ['github.com'] }, filesystem: { denyRead: ['~/.ssh'] } },
});

describe('attend install: sandbox rules', () => {
  it('names the key directory, the bus directories a send writes and the signer the settings already name', () => {
    expect(rules).toEqual({
      signer: '127.0.0.1:23456',
      keysDir: '/home/u/.config/attend/keys',
      writable: ['signals', 'state', 'cache', 'quarantine'].map((d) => `/home/u/.cache/attend/${d}`),
      deny: ['Read(~/.config/attend/keys/**)', 'Edit(~/.config/attend/keys/**)', 'Edit(~/.config/attend/trust/**)'],
    });
    const fresh = sandboxRulesFor({ settings: null, keysDir: '/k', root: '/r', home: '/home/u', random: () => 0.5 });
    expect(fresh.signer).toBe('127.0.0.1:26000');
    expect(rulePath('/srv/keys', '/home/u')).toBe('//srv/keys');
  });

  it('merges beside what the user has, once', () => {
    const s: Record<string, unknown> = users();
    expect(mergeSandboxRules(s, rules, 'settings.json')).toBe(true);
    expect(s).toEqual({
      env: { EDITOR: 'vim', ATTEND_SIGNER: '127.0.0.1:23456' },
      permissions: { allow: ['Bash(git status)'], deny: ['Read(./.env)', ...rules.deny] },
      sandbox: {
        enabled: true,
        excludedCommands: ['docker'],
        network: { allowedDomains: ['github.com', '127.0.0.1:23456'] },
        filesystem: { denyRead: ['~/.ssh', rules.keysDir], allowWrite: rules.writable },
      },
    });
    expect(mergeSandboxRules(s, rules, 'settings.json')).toBe(false);
  });

  it('comes out again leaving the file as it was', () => {
    for (const before of [users(), {}, { model: 'opus' }]) {
      const s: Record<string, unknown> = structuredClone(before);
      mergeSandboxRules(s, rules, 'settings.json');
      expect(removeSandboxRules(s, rules, 'settings.json')).toBe(true);
      expect(s).toEqual(before);
      expect(removeSandboxRules(s, rules, 'settings.json')).toBe(false);
    }
  });

  it('refuses a settings file whose shape is not Claude Code’s, naming the key', () => {
    for (const [bad, key] of [
      [{ sandbox: [] }, '"sandbox" is not an object'],
      [{ sandbox: { filesystem: { denyRead: '~/.ssh' } } }, '"sandbox.filesystem.denyRead" is not an array'],
      [{ env: 'x' }, '"env" is not an object'],
    ] as const) {
      expect(() => mergeSandboxRules(structuredClone(bad) as Record<string, unknown>, rules, 'settings.json')).toThrow(AttendError);
      expect(() => mergeSandboxRules(structuredClone(bad) as Record<string, unknown>, rules, 'settings.json')).toThrow(key);
    }
  });

  it('warns when the sandbox is on and the model may still run a command outside it', () => {
    expect(sandboxWarnings({ sandbox: { enabled: true } })[0]).toContain('allowUnsandboxedCommands');
    expect(sandboxWarnings({ sandbox: { enabled: true, allowUnsandboxedCommands: false } })).toEqual([]);
    expect(sandboxWarnings({})).toEqual([]);
  });
});
