// Types for fake-anthropic.mjs (the e2e tests import it; test/helpers/fake-anthropic.ts names them).
export function startFakeAnthropic<Req, Reply>(script: (req: Req, ctx: { main: boolean; turn: number }) => Reply): Promise<{ url: string; requests: Req[]; close(): Promise<void> }>;
