// Port checks for the embedded servers, so a clash says which variable to change instead of a cryptic failure.
import net from 'node:net';

export async function assertPortFree(host: string, port: number, variable: string): Promise<void> {
  if (!(await isPortFree(host, port))) {
    throw new Error(
      `Port ${port} on ${host} is already in use. Stop whatever listens there or set ${variable} to a free port.`,
    );
  }
}

export function isPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A port the OS says is free right now. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ host, port: 0 }, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * `count` different ports, free right now. Each is held until all are chosen: asking freePort() several times in a
 * row can return one port twice, and two servers then clash on it.
 */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const held: net.Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = net.createServer();
      held.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host, port: 0 }, () => resolve());
      });
    }
    return held.map((server) => (server.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}
