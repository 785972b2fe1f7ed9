// `attend search` over real processes (issue 23 §4): a message another process writes is found
// by the next search, within a second; the MCP tool over a real stdio client returns hits with
// their thread and keeps another session's direct mail out.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { runBin, useTempBus } from '../helpers/bus.js';
import { connectMcp } from '../helpers/mcp-client.js';

const session = useTempBus(() => {});

describe('attend search, real processes', () => {
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close();
    client = undefined;
  });

  it('finds a message another process just wrote by the next search', async () => {
    const alpha = session({ name: 'alpha' });
    const beta = session({ name: 'beta' });
    expect(runBin(['search', 'heron'], { env: beta.env, cwd: beta.cwd }).stdout).toBe('No matches.\n');
    const sent = runBin(['send', 'a grey heron by the lock'], { env: alpha.env, cwd: alpha.cwd });
    expect(sent.exitCode, sent.stderr).toBe(0);
    const id = sent.stdout.trim();
    // The very next search finds it: the search catches up from the directory's index before
    // it queries, so "within a second" is "by the next search", however soon.
    const r = runBin(['search', 'heron', '--json'], { env: beta.env, cwd: beta.cwd });
    const hit = (JSON.parse(r.stdout) as { hits: { id: string; thread: string }[] }).hits.find((h) => h.id === id);
    expect(hit?.thread).toBe(id);
  });

  it('serves search over MCP stdio, with thread, and not another session’s direct mail', async () => {
    const alpha = session({ name: 'alpha' });
    const beta = session({ name: 'beta' });
    const eve = session({ name: 'eve' });
    const root = runBin(['send', 'kingfisher sighting'], { env: alpha.env, cwd: alpha.cwd }).stdout.trim();
    const reply = runBin(['reply', '--re', root, 'second kingfisher'], { env: beta.env, cwd: beta.cwd }).stdout.trim();
    runBin(['send', '--to', 'beta', 'private kingfisher nest location'], { env: alpha.env, cwd: alpha.cwd });
    client = await connectMcp(eve, { name: 'search-e2e' });
    const tool = (await client.listTools()).tools.find((t) => t.name === 'search');
    expect(tool?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    const r = (await client.callTool({ name: 'search', arguments: { query: 'kingfisher' } })) as unknown as { structuredContent: { hits: { id: string; thread: string; preview: string }[] } };
    expect(r.structuredContent.hits.map((h) => h.preview).sort()).toEqual(['kingfisher sighting', 'second kingfisher']);
    expect(r.structuredContent.hits.find((h) => h.id === reply)?.thread).toBe(root);
    const bad = (await client.callTool({ name: 'search', arguments: { query: 'x', limit: 0 } })) as unknown as { isError?: boolean };
    expect(bad.isError).toBe(true);
  });
});
