/**
 * A module loaded on first use, once. For the libraries only some routes or
 * settings need (S3, passkeys, social sign-in, SMTP, function bundling, the
 * SQL route's driver): a process that never uses them never holds them, which
 * keeps an idle Hearth small (docs/architecture.md "Memory").
 */
export function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | null = null;
  return () => {
    loading ??= load().catch((err) => {
      loading = null; // a failed load (a missing optional package) is tried again next time
      throw err;
    });
    return loading;
  };
}
