/** Polls `read` until `predicate` holds or `ms` pass, and returns the last value read (for things other processes or background work finish). */
export async function until<T>(read: () => Promise<T>, predicate: (v: T) => boolean, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (predicate(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
}
