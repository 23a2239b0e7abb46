/**
 * What the status-bar item shows: verification progress from `$/progress`, how many
 * references need a human check first (P0) or soon (P1), from the diagnostics the client
 * receives, and the server's `citelsp/status` notice (e.g. "offline — 4 references not
 * checked"). As in `citelsp check --fail-on`, an Error counts as P0 and a Warning as P1; a
 * reference's diagnostics on its citations and on its entry count once.
 *
 * No `vscode` import: the unit tests run under plain Node.
 */

export type Level = 'error' | 'warning' | 'other';

export interface Finding {
  level: Level;
  message: string;
}

export interface StatusView {
  text: string;
  tooltip: string;
  /** Command run on click. */
  command: string;
}

/** `"he2016: DOI ..."` → `he2016`: verification messages start with the citation key. */
function referenceOf(uri: string, finding: Finding): string {
  const match = /^([^\s:]+): /.exec(finding.message);
  return match ? `key:${match[1]}` : `${uri}#${finding.message}`;
}

export class StatusModel {
  private readonly findings = new Map<string, Finding[]>();
  private progress: string | undefined;
  private notice = '';
  private running = false;

  setRunning(running: boolean): void {
    this.running = running;
    if (!running) {
      this.progress = undefined;
      this.notice = '';
    }
  }

  /** The server's `citelsp/status` message; empty when there is nothing to say. */
  setNotice(message: string | undefined): void {
    this.notice = message ?? '';
  }

  setFindings(uri: string, findings: Finding[]): void {
    const ours = findings.filter((f) => f.level !== 'other');
    if (ours.length > 0) {
      this.findings.set(uri, ours);
    } else {
      this.findings.delete(uri);
    }
  }

  clearFindings(): void {
    this.findings.clear();
  }

  /** A `$/progress` begin or report message, e.g. "Verifying references 12/140". */
  setProgress(message: string | undefined): void {
    this.progress = message ?? 'Verifying references';
  }

  endProgress(): void {
    this.progress = undefined;
  }

  counts(): { p0: number; p1: number } {
    const p0 = new Set<string>();
    const p1 = new Set<string>();
    for (const [uri, list] of this.findings) {
      for (const finding of list) {
        (finding.level === 'error' ? p0 : p1).add(referenceOf(uri, finding));
      }
    }
    for (const key of p0) {
      p1.delete(key);
    }
    return { p0: p0.size, p1: p1.size };
  }

  view(): StatusView {
    if (!this.running) {
      return { text: '$(circle-slash) citelsp', tooltip: 'citelsp is not running: click for its log',
        command: 'citelsp.showOutput' };
    }
    const { p0, p1 } = this.counts();
    const counts = `P0 ${p0}  P1 ${p1}`;
    let tooltip = `${p0} reference(s) to check first (P0), ${p1} to check soon (P1)` +
      ' — click for the human-check checklist';
    const notice = this.notice ? ` · ${this.notice}` : '';
    if (this.notice) {
      tooltip = `${this.notice}\n${tooltip}`;
    }
    if (this.progress !== undefined) {
      const fraction = /(\d+\/\d+)/.exec(this.progress)?.[1];
      const text = ['$(sync~spin) citelsp', fraction, counts].filter(Boolean).join(' ');
      return { text: text + notice, tooltip: `${this.progress}\n${tooltip}`,
        command: 'citelsp.showChecklist' };
    }
    const icon = p0 > 0 ? '$(error)' : p1 > 0 ? '$(warning)' : '$(check)';
    return { text: `${icon} citelsp ${counts}${notice}`, tooltip, command: 'citelsp.showChecklist' };
  }
}
