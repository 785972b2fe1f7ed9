// Chat's UI entry points, loaded through load.ts so React is loaded in production mode.
// Ink and React are imported only under tools/chat (house style); the benchmark mounts the
// App through mountChat rather than importing them itself.

export { mountChat, RENDER_OPTIONS } from './mount.js';
export { startChat } from './start-chat.js';
export { createBusSource } from './bus-source.js';
export { createChatActions } from './actions.js';
