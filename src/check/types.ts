/** One line of `kubectl conndrain check`: what was checked, how it went, and the fix when it failed. */
export type CheckStatus = 'ok' | 'fail' | 'info';

export interface CheckResult {
  /** Stable id for --json consumers (`webhook.ca-bundle`). */
  id: string;
  status: CheckStatus;
  /** One line: what was found. */
  summary: string;
  /** One line: what to do, when it failed (or when an info line asks for something). */
  fix?: string;
  /** Names behind the summary (nodes without an agent, opted-in namespaces...). */
  details?: string[];
}

/** A Kubernetes object as the checks read it: plain JSON. */
export type KubeJson = Record<string, unknown> & {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
};

export function ok(id: string, summary: string, details?: string[]): CheckResult {
  return details === undefined ? { id, status: 'ok', summary } : { id, status: 'ok', summary, details };
}

export function failed(id: string, summary: string, fix: string, details?: string[]): CheckResult {
  return details === undefined ? { id, status: 'fail', summary, fix } : { id, status: 'fail', summary, fix, details };
}
