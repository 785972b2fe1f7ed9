// The one way into chat's UI modules. React and react-reconciler choose their development
// or production build from NODE_ENV when they are first loaded, and NODE_ENV is unset for
// an installed CLI, which meant the development build: several times slower per render and,
// under 50 messages/s, a heap that grew by ~20 MB/s until it hit the limit (issue #5
// benchmark). So the UI is loaded with NODE_ENV=production, and the caller's value is put
// back once the modules are in memory, so nothing attend spawns sees the change.
// Tests import the modules directly and keep React's development checks.

export type ChatUi = typeof import('./ui.js');

export async function loadChatUi(): Promise<ChatUi> {
  const had = Object.prototype.hasOwnProperty.call(process.env, 'NODE_ENV');
  const prev = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    return await import('./ui.js');
  } finally {
    if (had) process.env.NODE_ENV = prev;
    else delete process.env.NODE_ENV;
  }
}
