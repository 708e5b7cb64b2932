/**
 * Storage through /storage/v1 with the secret key: buckets (create, edit,
 * empty, delete) and, inside one, an object browser with folders, drag-and-
 * drop upload with progress per file, download, previews (images, text,
 * PDF: bytes fetched with the key in a header, shown from a blob: URL),
 * signed URLs with a chosen lifetime, move and delete.
 */
import { useEffect, useState } from 'preact/hooks';
import { data, dataBase, dataBlob, upload, type Project } from '../api.ts';
import { href } from '../router.ts';
import { ConfirmDialog, Dialog, Empty, ErrorNote, Loading, copyText, useAction, useLoad } from '../ui.tsx';

interface Bucket {
  id: string;
  name: string;
  public: boolean;
  file_size_limit: number | null;
  allowed_mime_types: string[] | null;
  created_at: string;
}
interface Entry {
  name: string;
  id: string | null;
  metadata: { size?: number; mimetype?: string } | null;
  updated_at: string | null;
}

const enc = (path: string) => path.split('/').map(encodeURIComponent).join('/');
/** Entries a folder listing asks for at a time: the most /storage/v1/object/list gives. */
const LIST_PAGE = 1000;
const size = (n?: number) =>
  n === undefined
    ? ''
    : n < 1024
      ? `${n} B`
      : n < 1048576
        ? `${(n / 1024).toFixed(1)} KB`
        : `${(n / 1048576).toFixed(1)} MB`;

export function StoragePage({ project, rest }: { project: Project; rest: string[] }) {
  const buckets = useLoad(
    async () => (await data<Bucket[]>(project.ref, 'GET', '/storage/v1/bucket')).body,
    [project.ref],
  );
  const [editing, setEditing] = useState<Bucket | 'new' | null>(null);
  const [bucketId, ...prefixParts] = rest;
  const bucket = buckets.data?.find((b) => b.id === bucketId);
  return (
    <section class="storage">
      <h1>Storage</h1>
      <div class="split">
        <nav aria-label="Buckets" class="table-list">
          <button type="button" onClick={() => setEditing('new')}>
            New bucket
          </button>
          <ErrorNote error={buckets.error} />
          {!buckets.data && !buckets.error && <Loading what="buckets" />}
          {buckets.data?.length === 0 && <Empty>No buckets yet.</Empty>}
          <ul>
            {buckets.data?.map((b) => (
              <li key={b.id}>
                <a href={href('p', project.ref, 'storage', b.id)} aria-current={b === bucket ? 'page' : undefined}>
                  {b.name} <span class="badge">{b.public ? 'public' : 'private'}</span>
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="table-main">
          {bucket ? (
            <Browser
              key={bucket.id}
              project={project}
              bucket={bucket}
              prefix={prefixParts.length ? `${prefixParts.join('/')}/` : ''}
              onEdit={() => setEditing(bucket)}
              onChanged={buckets.reload}
            />
          ) : (
            buckets.data && <Empty>Choose a bucket, or create one.</Empty>
          )}
        </div>
      </div>
      {editing && (
        <BucketDialog
          project={project}
          bucket={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onDone={() => (setEditing(null), buckets.reload())}
        />
      )}
    </section>
  );
}

function BucketDialog({
  project,
  bucket,
  onClose,
  onDone,
}: {
  project: Project;
  bucket: Bucket | null;
  onClose: () => void;
  onDone: () => void;
}) {
  const [name, setName] = useState(bucket?.name ?? '');
  const [isPublic, setPublic] = useState(bucket?.public ?? false);
  const [limit, setLimit] = useState(bucket?.file_size_limit ? String(bucket.file_size_limit) : '');
  const [mimes, setMimes] = useState(bucket?.allowed_mime_types?.join(', ') ?? '');
  const [run, busy, error] = useAction();
  return (
    <Dialog title={bucket ? `Edit bucket ${bucket.name}` : 'New bucket'} onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            const body = {
              public: isPublic,
              file_size_limit: limit ? Number(limit) : null,
              allowed_mime_types: mimes.trim()
                ? mimes
                    .split(',')
                    .map((m) => m.trim())
                    .filter(Boolean)
                : null,
            };
            if (bucket) await data(project.ref, 'PUT', `/storage/v1/bucket/${encodeURIComponent(bucket.id)}`, { body });
            else await data(project.ref, 'POST', '/storage/v1/bucket', { body: { name, id: name, ...body } });
            onDone();
          });
        }}
      >
        {!bucket && (
          <label>
            Name
            <input required value={name} onInput={(e) => setName(e.currentTarget.value)} autoFocus />
          </label>
        )}
        <label class="check">
          <input type="checkbox" checked={isPublic} onChange={(e) => setPublic(e.currentTarget.checked)} /> Public
          (anyone with the URL can download)
        </label>
        <label>
          Size limit per file (bytes, empty for the project's limit)
          <input type="number" min="1" value={limit} onInput={(e) => setLimit(e.currentTarget.value)} />
        </label>
        <label>
          Allowed MIME types (comma-separated, e.g. image/*, application/pdf; empty for any)
          <input value={mimes} onInput={(e) => setMimes(e.currentTarget.value)} />
        </label>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy}>
            {bucket ? 'Save' : 'Create bucket'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

interface Upload {
  name: string;
  progress: number;
  error?: string;
}

function Browser({
  project,
  bucket,
  prefix,
  onEdit,
  onChanged,
}: {
  project: Project;
  bucket: Bucket;
  prefix: string;
  onEdit: () => void;
  onChanged: () => void;
}) {
  // How many pages of the folder are shown ("Load more" adds one); a new folder starts at one.
  const [shown, setShown] = useState({ prefix, pages: 1 });
  const pages = shown.prefix === prefix ? shown.pages : 1;
  const entries = useLoad(async () => {
    // Every shown page again (a reload after an upload or a move sees the change); a short page is the last.
    const all: Entry[] = [];
    for (let page = 0; page < pages; page++) {
      const { body } = await data<Entry[]>(
        project.ref,
        'POST',
        `/storage/v1/object/list/${encodeURIComponent(bucket.id)}`,
        { body: { prefix, limit: LIST_PAGE, offset: page * LIST_PAGE, sortBy: { column: 'name', order: 'asc' } } },
      );
      all.push(...body);
      if (body.length < LIST_PAGE) return { entries: all, more: false };
    }
    return { entries: all, more: true };
  }, [project.ref, bucket.id, prefix, pages]);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [dragging, setDragging] = useState(false);
  const [selected, setSelected] = useState<Entry | null>(null);
  const [confirm, setConfirm] = useState<'empty' | 'delete-bucket' | null>(null);
  const [folder, setFolder] = useState('');
  const crumbs = prefix.split('/').filter(Boolean);

  async function send(files: File[]) {
    const start = uploads.length;
    setUploads((u) => [...u, ...files.map((f) => ({ name: f.name, progress: 0 }))]);
    await Promise.all(
      files.map((file, i) =>
        upload(
          project.ref,
          `/storage/v1/object/${encodeURIComponent(bucket.id)}/${enc(prefix + file.name)}`,
          file,
          (p) => setUploads((u) => u.map((x, j) => (j === start + i ? { ...x, progress: p } : x))),
        ).catch((e: Error) => setUploads((u) => u.map((x, j) => (j === start + i ? { ...x, error: e.message } : x)))),
      ),
    );
    entries.reload();
  }

  return (
    <div>
      <h2>
        {bucket.name} <span class="badge">{bucket.public ? 'public' : 'private'}</span>
      </h2>
      <p class="muted">
        {bucket.file_size_limit ? `Files up to ${size(bucket.file_size_limit)}. ` : ''}
        {bucket.allowed_mime_types?.length ? `Types: ${bucket.allowed_mime_types.join(', ')}.` : ''}
      </p>
      <div class="toolbar">
        <button type="button" onClick={onEdit}>
          Edit bucket
        </button>
        <button type="button" onClick={() => setConfirm('empty')}>
          Empty bucket
        </button>
        <button type="button" class="danger" onClick={() => setConfirm('delete-bucket')}>
          Delete bucket
        </button>
      </div>
      <nav aria-label="Folder path" class="crumbs">
        <a href={href('p', project.ref, 'storage', bucket.id)}>{bucket.name}</a>
        {crumbs.map((c, i) => (
          <span key={i}>
            {' / '}
            <a href={href('p', project.ref, 'storage', bucket.id, ...crumbs.slice(0, i + 1))}>{c}</a>
          </span>
        ))}
      </nav>
      <div
        class={`dropzone${dragging ? ' over' : ''}`}
        onDragOver={(e) => (e.preventDefault(), setDragging(true))}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          void send([...(e.dataTransfer?.files ?? [])]);
        }}
      >
        <p>Drop files here to upload them into /{prefix}, or</p>
        <label class="button">
          Choose files
          <input
            type="file"
            multiple
            class="sr-only"
            onChange={(e) => (void send([...(e.currentTarget.files ?? [])]), (e.currentTarget.value = ''))}
          />
        </label>
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            if (folder.trim())
              location.hash = href(
                'p',
                project.ref,
                'storage',
                bucket.id,
                ...crumbs,
                ...folder.trim().split('/').filter(Boolean),
              );
            setFolder('');
          }}
        >
          <label>
            New folder
            <input value={folder} onInput={(e) => setFolder(e.currentTarget.value)} />
          </label>
          <button type="submit">Open folder</button>
        </form>
      </div>
      {uploads.length > 0 && (
        <ul class="uploads" aria-label="Uploads">
          {uploads.map((u, i) => (
            <li key={i}>
              <span>{u.name}</span> <progress max={1} value={u.progress} aria-label={`Upload of ${u.name}`} />{' '}
              {u.error ? <span class="error">{u.error}</span> : `${Math.round(u.progress * 100)}%`}
            </li>
          ))}
        </ul>
      )}
      <ErrorNote error={entries.error} />
      {entries.loading && !entries.data && <Loading what="files" />}
      {entries.data?.entries.length === 0 && <Empty>This folder is empty: drop files above.</Empty>}
      {entries.data && entries.data.entries.length > 0 && (
        <table class="list">
          <caption class="sr-only">Files in /{prefix}</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Size</th>
              <th scope="col">Type</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {entries.data.entries.map((e) => (
              <tr key={e.name}>
                <td>
                  {e.id === null ? (
                    <a href={href('p', project.ref, 'storage', bucket.id, ...crumbs, e.name)}>{e.name}/</a>
                  ) : (
                    <button type="button" class="link" onClick={() => setSelected(e)}>
                      {e.name}
                    </button>
                  )}
                </td>
                <td>{size(e.metadata?.size)}</td>
                <td>{e.metadata?.mimetype ?? (e.id === null ? 'folder' : '')}</td>
                <td>{e.updated_at ? new Date(e.updated_at).toLocaleString() : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {entries.data && entries.data.entries.length > 0 && (
        <p class="pager">
          <span role="status">
            {entries.data.entries.length.toLocaleString('en')} entries{entries.data.more ? ' shown' : ''}
          </span>
          {entries.data.more && (
            <button type="button" disabled={entries.loading} onClick={() => setShown({ prefix, pages: pages + 1 })}>
              {entries.loading ? 'Loading…' : `Load ${LIST_PAGE.toLocaleString('en')} more`}
            </button>
          )}
        </p>
      )}
      {selected && (
        <ObjectDialog
          project={project}
          bucket={bucket}
          path={prefix + selected.name}
          entry={selected}
          onClose={() => setSelected(null)}
          onChanged={() => (setSelected(null), entries.reload())}
        />
      )}
      {confirm === 'empty' && (
        <ConfirmDialog
          title={`Empty ${bucket.name}?`}
          text="Every file in the bucket is deleted; the bucket stays."
          confirmWord={bucket.name}
          action="Empty bucket"
          onConfirm={async () => (
            await data(project.ref, 'POST', `/storage/v1/bucket/${encodeURIComponent(bucket.id)}/empty`),
            entries.reload()
          )}
          onClose={() => setConfirm(null)}
        />
      )}
      {confirm === 'delete-bucket' && (
        <ConfirmDialog
          title={`Delete ${bucket.name}?`}
          text="The bucket must be empty first (Empty bucket)."
          confirmWord={bucket.name}
          action="Delete bucket"
          onConfirm={async () => {
            await data(project.ref, 'DELETE', `/storage/v1/bucket/${encodeURIComponent(bucket.id)}`);
            onChanged();
            location.hash = href('p', project.ref, 'storage');
          }}
          onClose={() => setConfirm(null)}
        />
      )}
    </div>
  );
}

const LIFETIMES: [number, string][] = [
  [60, '1 minute'],
  [3600, '1 hour'],
  [86400, '1 day'],
  [604800, '1 week'],
];

function ObjectDialog({
  project,
  bucket,
  path,
  entry,
  onClose,
  onChanged,
}: {
  project: Project;
  bucket: Bucket;
  path: string;
  entry: Entry;
  onClose: () => void;
  onChanged: () => void;
}) {
  const type = entry.metadata?.mimetype ?? '';
  const kind = type.startsWith('image/')
    ? 'image'
    : type === 'application/pdf'
      ? 'pdf'
      : /^text\/|json|xml|javascript|csv/.test(type)
        ? 'text'
        : null;
  const [preview, setPreview] = useState<{ url?: string; text?: string } | null>(null);
  const [lifetime, setLifetime] = useState(3600);
  const [signed, setSigned] = useState('');
  const [moveTo, setMoveTo] = useState(path);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [run, busy, error] = useAction();
  const objectPath = `/storage/v1/object/${encodeURIComponent(bucket.id)}/${enc(path)}`;

  useEffect(() => {
    let url: string | undefined;
    if (kind)
      void run(async () => {
        const blob = await dataBlob(project.ref, objectPath);
        if (kind === 'text') setPreview({ text: await blob.slice(0, 100_000).text() });
        else setPreview({ url: (url = URL.createObjectURL(blob)) });
      });
    return () => url && URL.revokeObjectURL(url);
  }, [path]);

  return (
    <Dialog title={path} onClose={onClose} wide>
      <p class="muted">
        {type} · {size(entry.metadata?.size)}
      </p>
      <div class="preview" aria-label="Preview">
        {!kind && <p class="muted">No preview for this type: download it.</p>}
        {preview?.url && kind === 'image' && <img src={preview.url} alt={`Preview of ${path}`} />}
        {preview?.url && kind === 'pdf' && <iframe src={preview.url} title={`Preview of ${path}`} />}
        {preview?.text !== undefined && <pre data-testid="text-preview">{preview.text}</pre>}
      </div>
      <div class="toolbar">
        <button
          type="button"
          onClick={() =>
            run(async () => {
              const a = document.createElement('a');
              a.href = URL.createObjectURL(await dataBlob(project.ref, objectPath));
              a.download = path.split('/').pop()!;
              a.click();
              setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
            })
          }
        >
          Download
        </button>
        <label class="inline">
          Signed URL valid for
          <select value={lifetime} onChange={(e) => setLifetime(Number(e.currentTarget.value))}>
            {LIFETIMES.map(([s, label]) => (
              <option key={s} value={s}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          disabled={busy}
          onClick={() =>
            run(async () => {
              const { body } = await data<{ signedURL: string }>(
                project.ref,
                'POST',
                `/storage/v1/object/sign/${encodeURIComponent(bucket.id)}/${enc(path)}`,
                { body: { expiresIn: lifetime } },
              );
              const url = `${dataBase(project.ref)}/storage/v1${body.signedURL}`;
              setSigned(url);
              await copyText(url).catch(() => {});
            })
          }
        >
          Copy signed URL
        </button>
      </div>
      {signed && (
        <label>
          Signed URL (copied)
          <input readOnly value={signed} data-testid="signed-url" onFocus={(e) => e.currentTarget.select()} />
        </label>
      )}
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            await data(project.ref, 'POST', '/storage/v1/object/move', {
              body: { bucketId: bucket.id, sourceKey: path, destinationKey: moveTo.replace(/^\/+/, '') },
            });
            onChanged();
          });
        }}
      >
        <label>
          Move to
          <input value={moveTo} onInput={(e) => setMoveTo(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy || moveTo === path}>
          Move
        </button>
      </form>
      <ErrorNote error={error} />
      <div class="actions">
        <button type="button" class="danger" onClick={() => setConfirmDelete(true)}>
          Delete file
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      {confirmDelete && (
        <ConfirmDialog
          title={`Delete ${path}?`}
          text="The file is deleted for good."
          action="Delete file"
          onConfirm={async () => (
            await data(project.ref, 'DELETE', `/storage/v1/object/${encodeURIComponent(bucket.id)}`, {
              body: { prefixes: [path] },
            }),
            onChanged()
          )}
          onClose={() => setConfirmDelete(false)}
        />
      )}
    </Dialog>
  );
}
