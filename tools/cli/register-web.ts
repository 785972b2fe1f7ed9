// CLI wiring for `attend web` (issue 24 §1).

import { examples, type Registrar } from './registrar.js';

export const registerWeb: Registrar = (program, ctx, io) => {
  program
    .command('web')
    .description('serve the person a web page of the bus on 127.0.0.1: read live, write as yourself')
    .option('--port <n>', 'port to listen on (0: a free one)', '0')
    .option('--host <addr>', 'address to listen on; anything but loopback needs --tls-key/--tls-cert', '127.0.0.1')
    .option('--open', 'open the login URL in a browser')
    .option('--login', 'print a fresh one-time login URL for the attend web already running on this bus, and exit')
    .option('--tls-key <file>', 'TLS private key (PEM), to serve https')
    .option('--tls-cert <file>', 'TLS certificate (PEM), with --tls-key')
    .addHelpText(
      'after',
      `
It prints a login URL that works once, for 2 minutes; the browser then holds an HttpOnly
session cookie. Only the person who owns the bus can start it (a session is refused, exit 4).
Ctrl-C stops it. A used or expired URL: attend web --login prints a new one for the running
server (no server on the bus: exit 1).
${examples(['attend web', 'attend web --open', 'attend web --login', 'attend web --port 8080   # then, from a laptop: ssh -L 8080:127.0.0.1:8080 host'])}`,
    )
    .action(async (opts: { port: string; host: string; open?: boolean; login?: boolean; tlsKey?: string; tlsCert?: string }) => {
      const { runWeb } = await import('./commands/web.js');
      const code = await runWeb(ctx, { login: opts.login ?? false, port: opts.port, host: opts.host, open: opts.open ?? false, tlsKey: opts.tlsKey, tlsCert: opts.tlsCert });
      if (code !== 0) io.setExitCode(code);
    });
};
