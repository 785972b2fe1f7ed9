// The plugin in an interactive Claude Code, in a real terminal (tmux): the plugin's own
// monitor (monitors/monitors.json) starts `attend run` with no model involved, and on a quiet
// bus it costs nothing — the model is not woken until a message worth a wake arrives, and
// then that message is the first thing it sees (issue #11 §7). A start line printed at once
// would race the message here (Monitor batches lines within 200 ms), so this test catches
// it only sometimes; test/e2e/sensor.test.ts proves the silence deterministically.

import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { readSensor } from '../../tools/bus/delivery/sensor-claim.js';
import { runBin } from '../helpers/bus.js';
import { type ClaudeHome, makeClaudeHome } from '../helpers/claude-code.js';
import { type FakeAnthropic, conversationText, startFakeAnthropic } from '../helpers/fake-anthropic.js';
import { type TmuxClaude, startTmuxClaude } from '../helpers/tmux-claude.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
let home: ClaudeHome | undefined;
let api: FakeAnthropic | undefined;
let cc: TmuxClaude | undefined;

afterEach(async () => {
  await cc?.stop();
  await api?.close();
  home?.cleanup();
  home = api = cc = undefined;
});

describe('claude code plugin, interactive', () => {
  it("the plugin's monitor starts attend run, which wakes the model only with the first message", async () => {
    const h = (home = makeClaudeHome());
    api = await startFakeAnthropic(() => ({ text: 'noted' }));
    const env = h.env({ baseUrl: api.url, attendOnPath: false });
    // A trusted project and an approved key, so no dialog stands between the session and its plugins.
    cc = startTmuxClaude(h, env, ['--plugin-dir', REPO]);
    const until = cc.until;
    const sid = (await cc.session()).sessionId;
    // The plugin's monitor is up when the session's sensor claim names a live process.
    await until(() => readSensor(h.root, sid) !== null, 'the sensor claim');
    expect(api.requests).toEqual([]);
    const sent = runBin(['send', '--to', sid, 'interactive-payload-5e1d'], { env: { PATH: env.PATH!, HOME: h.home, ATTEND_HOME: h.root }, cwd: h.dir });
    expect(sent.exitCode, sent.stderr).toBe(0);
    const first = await until(() => api!.requests[0], 'a model request');
    // Nothing woke the model before the message did.
    expect(conversationText(first)).toContain('interactive-payload-5e1d');
    expect(conversationText(first)).toMatch(/\[attend\] sensor started for /);
  }, 240_000);
});
