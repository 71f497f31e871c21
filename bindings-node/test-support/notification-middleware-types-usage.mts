// Compiled (never run) by test/types.test.mjs and `make lint-node`: typed
// usage of notification hooks (`server.useNotifications`,
// `client.useNotifications`). Each misuse carries an expect-error
// directive, so the typings must reject it.

import {
  Server,
  Client,
  type ClientNotification,
  type NotificationHook,
  type ServerNotification,
} from 'ferromcp';

const server = new Server({ name: 'typed-notifications', version: '1.0.0' });

// A hook that reads, changes and stops notifications; returns the server.
const chained: Server = server.useNotifications((note) => {
  const method: string = note.method;
  const params: Record<string, any> = note.params;
  if (method === 'notifications/cancelled') return false;
  note.params = { ...params, seen: true };
  return true;
});
chained.useNotifications((note) => {
  console.error(note.method);
});

// Named hooks, typed for either side.
const ignoreCancels: NotificationHook<ServerNotification> = (note) => note.method !== 'notifications/cancelled';
server.useNotifications(ignoreCancels);
const anySide: NotificationHook = (note) => note.method !== 'notifications/message';
server.useNotifications(anySide);

// @ts-expect-error: the method is read-only
server.useNotifications((note) => { note.method = 'other'; });
// @ts-expect-error: a hook answers synchronously, never with a promise
server.useNotifications(async (note) => note.method !== 'x');
// @ts-expect-error: a hook answers with a boolean or nothing
server.useNotifications(() => 'stop');
// @ts-expect-error: a hook is a function
server.useNotifications('hook');

const client = await Client.inMemory(server, { era: 'legacy' });
const sameClient: Client = client.useNotifications((note: ClientNotification) => {
  if (note.method === 'notifications/progress' && note.params?.progress === 2) return false;
  if (note.params !== null) note.params.message = 'changed';
});
sameClient.useNotifications(anySide);
// @ts-expect-error: the method is read-only
client.useNotifications((note) => { note.method = 'other'; });
// @ts-expect-error: a server hook's params are an object; a client's may be anything
const serverOnly: NotificationHook<ServerNotification> = (note: { readonly method: string; params: string }) => note.params === '';
void serverOnly;
await client.callTool('anything', {}, { onProgress: (update) => console.error(update.progress) });
await client.close();
