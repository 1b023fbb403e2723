/** Loopback ports for tests that start a server the way a user does (by port number). */
import { createServer } from 'node:net';

/** A loopback port nothing listens on now (the OS's next free one). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
