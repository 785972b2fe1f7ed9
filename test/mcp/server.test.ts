// callTool's last resort (issue #9 §5, issue #11 §3): what is neither bad input nor a refusal
// still comes back as a tool error the client hands to the model: a failed system call as the
// bus being unusable, anything else (a result that drifted from its outputSchema, a thrown
// TypeError) as an internal error with the pointer to report it.

import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { REPORT_URL_HINT } from '../../tools/wire/errors.js';
import { callTool } from '../../tools/mcp/server.js';
import { type McpTool, READ_ONLY, defineTool } from '../../tools/mcp/tool.js';
import type { VerbCtx } from '../../tools/verbs/context.js';

const ctx = () => ({}) as VerbCtx;
function toolThat(run: () => unknown): Map<string, McpTool> {
  const t = defineTool({ name: 'probe', title: 'Probe', description: 'test', hints: READ_ONLY, input: z.strictObject({}), output: z.object({ ok: z.boolean() }), run: run as () => { ok: boolean } });
  return new Map([['probe', t as unknown as McpTool]]);
}
const text = (r: { content: unknown[] }) => (r.content[0] as { text: string }).text;

describe('callTool', () => {
  it('returns structuredContent and the same JSON as text', () => {
    const r = callTool(toolThat(() => ({ ok: true })), ctx, { name: 'probe', arguments: {} });
    expect(r).toMatchObject({ structuredContent: { ok: true } });
    expect(r.isError).toBeUndefined();
    expect(JSON.parse(text(r))).toEqual({ ok: true });
  });

  it('reports a bug as an internal error with the pointer to report it, on one line', () => {
    const r = callTool(toolThat(() => { throw new TypeError('x is undefined\nat somewhere'); }), ctx, { name: 'probe', arguments: {} });
    expect(r.isError).toBe(true);
    expect(text(r)).toBe(`attend: internal error in probe: x is undefined at somewhere; ${REPORT_URL_HINT}`);
  });

  it('reports a result that drifted from the outputSchema as an internal error, not as data', () => {
    const r = callTool(toolThat(() => ({ ok: 'yes' })), ctx, { name: 'probe', arguments: {} });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^attend: internal error in probe: .*ok/);
    expect(r.structuredContent).toBeUndefined();
  });

  it('reports a failed system call as the bus being unusable', () => {
    const r = callTool(toolThat(() => { throw Object.assign(new Error("EACCES: permission denied, open '/bus/x'"), { code: 'EACCES', syscall: 'open' }); }), ctx, { name: 'probe', arguments: {} });
    expect(text(r)).toBe("attend: EACCES: permission denied, open '/bus/x'");
  });

  it('needs params with a tool name', () => {
    for (const params of [undefined, null, 'send', { arguments: {} }]) {
      const r = callTool(toolThat(() => ({ ok: true })), ctx, params);
      expect(r.isError).toBe(true);
      expect(text(r)).toBe('attend: tools/call needs a tool name; tools: probe');
    }
  });
});
