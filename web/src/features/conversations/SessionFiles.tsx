// A conversation as a session file (docs/sessions.md): the download button of a conversation,
// and the form that makes a new conversation of a file (LineUp's or Pi's).

import { useId, useState, type FormEvent } from "react";
import { ApiError, newIdempotencyKey } from "../../api/client";
import type { WorkspaceApi } from "../../api/hub";
import { useWorkspace } from "../../app/workspace";
import { navigate } from "../../lib/router";
import { useResource } from "../../lib/useResource";
import { Button, Card } from "../../ui";

/** Save a blob under a name, as a download of the browser. */
function save(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.rel = "noopener";
  document.body.appendChild(link);
  link.click();
  link.remove();
  // after the browser took the file; revoking at once can cancel the download
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export function DownloadSession({ api, conversationId }: { api: WorkspaceApi; conversationId: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const errorId = useId();

  async function download() {
    setBusy(true);
    setError(null);
    try {
      const file = await api.sessionFile(conversationId);
      save(file.blob, file.filename ?? `${conversationId}.jsonl`);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <span className="session-download">
      <Button
        size="sm"
        variant="ghost"
        icon="download"
        busy={busy}
        onClick={download}
        aria-describedby={error ? errorId : undefined}
      >
        Download session (.jsonl)
      </Button>
      {error ? (
        <span id={errorId} className="field-error" role="alert">
          {error}
        </span>
      ) : null}
    </span>
  );
}

export function ImportSession({ onCancel }: { onCancel: () => void }) {
  const { api } = useWorkspace();
  const [file, setFile] = useState<File | null>(null);
  const [project, setProject] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [key, setKey] = useState(newIdempotencyKey);
  const fileId = useId();
  const projectId = useId();
  const hintId = useId();
  const projects = useResource(() => api.projects().then((r) => r.projects), [api]);
  // a project's conversations are started by its owners and editors
  const startable = (projects.data ?? []).filter((p) => p.role === "owner" || p.role === "editor");

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!file) {
      setError("Choose a session file (.jsonl) to import.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const imported = await api.importSession(file, project || null, key);
      navigate(`/conversations/${imported.conversation.id}`);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
      setBusy(false);
    }
  }

  return (
    <Card className="new-conv">
      <form onSubmit={submit} noValidate>
        <h2 className="card-title">Import a session</h2>
        <div className="field">
          <label htmlFor={fileId}>Session file (.jsonl)</label>
          <input
            id={fileId}
            type="file"
            accept=".jsonl,application/x-ndjson,application/jsonl,application/json,text/plain"
            aria-describedby={hintId}
            onChange={(e) => {
              setFile(e.target.files?.[0] ?? null);
              setKey(newIdempotencyKey()); // another file is another import
              setError(null);
            }}
          />
          <p id={hintId} className="field-hint">
            A file downloaded from a LineUp conversation, or a Pi session file. Every branch is kept; the
            conversation shows the current one.
          </p>
        </div>
        <div className="field">
          <label htmlFor={projectId}>Project</label>
          <select id={projectId} value={project} onChange={(e) => setProject(e.target.value)}>
            <option value="">Personal</option>
            {startable.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </div>
        {error ? (
          <p className="field-error" role="alert">
            {error}
          </p>
        ) : null}
        <div className="button-row">
          <Button type="submit" variant="primary" icon="upload" busy={busy}>
            {busy ? "Importing…" : "Import session"}
          </Button>
          <Button variant="ghost" onClick={onCancel} disabled={busy}>
            Cancel
          </Button>
        </div>
      </form>
    </Card>
  );
}
