import net from 'node:net';

/**
 * Ports free on 127.0.0.1 right now, for a child process that must be told its
 * ports up front (the embedded PostgreSQL's, say). Each is held until all are
 * found, so the n ports differ; the OS picks them, so they avoid ports in use.
 */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const s = net.createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/**
 * The environment of a `hearth start` child on the embedded PostgreSQL (no
 * DATABASE_URL): its data folder, a free HTTP port and database port, quiet logs;
 * and `spare` more free ports, distinct from those two.
 */
export async function embeddedStartEnv(
  dataDir: string,
  spare = 0,
): Promise<{ env: NodeJS.ProcessEnv; port: number; spare: number[] }> {
  const [port, dbPort, ...others] = await freePorts(2 + spare);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HEARTH_DATA_DIR: dataDir,
    HEARTH_PORT: String(port),
    HEARTH_DB_PORT: String(dbPort),
    HEARTH_LOG_LEVEL: 'warn',
  };
  delete env.DATABASE_URL;
  return { env, port: port!, spare: others };
}
