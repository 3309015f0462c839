import { HearthError } from '../errors.js';
import { newId, unixSeconds } from '../ids.js';
import type { Db } from '../store/database.js';
import type { AgentApproval, ApprovalStatus } from '#shared/api/agents.js';
import type { ToolClass } from '#shared/api/config.js';

export type ApprovalOutcome = { decision: Exclude<ApprovalStatus, 'pending'>; reason: string | null };

export interface ApprovalRequest {
  runId: string;
  agentId: string;
  callId: string;
  name: string;
  arguments: string;
  class: ToolClass;
  timeoutSeconds: number;
  /** Aborted when the run is cancelled: the approval is withdrawn. */
  signal: AbortSignal;
}

/** An approval as stored: the wire record, its tool's name in `tool`. */
interface ApprovalRow extends Omit<AgentApproval, 'object' | 'name'> {
  tool: string;
}

function toApproval(row: ApprovalRow): AgentApproval {
  return {
    id: row.id,
    object: 'agent.approval',
    run_id: row.run_id,
    agent_id: row.agent_id,
    call_id: row.call_id,
    name: row.tool,
    arguments: row.arguments,
    class: row.class,
    status: row.status,
    reason: row.reason,
    created_at: row.created_at,
    expires_at: row.expires_at,
    decided_at: row.decided_at,
  };
}

/**
 * Tool calls waiting for the machine owner. Each is a row in SQLite (so the inbox survives a
 * reload of the app) and a waiter in this process; a decision, the timeout (which counts as
 * deny) or the run's cancellation settles it exactly once.
 */
export class ApprovalBroker {
  private readonly waiting = new Map<string, (outcome: ApprovalOutcome) => void>();
  private readonly statements;

  constructor(db: Db) {
    this.statements = {
      insert: db.prepare(
        `INSERT INTO agent_approvals (id, run_id, agent_id, call_id, tool, arguments, class, status, reason, created_at, expires_at, decided_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', NULL, ?, ?, NULL)`,
      ),
      settle: db.prepare<[ApprovalStatus, string | null, number, string]>(
        "UPDATE agent_approvals SET status = ?, reason = ?, decided_at = ? WHERE id = ? AND status = 'pending'",
      ),
      get: db.prepare<[string], ApprovalRow>('SELECT * FROM agent_approvals WHERE id = ?'),
      pending: db.prepare<[], ApprovalRow>("SELECT * FROM agent_approvals WHERE status = 'pending' ORDER BY created_at, rowid"),
      orphans: db.prepare<[string, number]>("UPDATE agent_approvals SET status = 'cancelled', reason = ?, decided_at = ? WHERE status = 'pending'"),
    };
  }

  /** Records a pending approval and returns it with the outcome to wait for. */
  open(request: ApprovalRequest): { approval: AgentApproval; outcome: Promise<ApprovalOutcome> } {
    const id = newId('appr_');
    const now = unixSeconds();
    this.statements.insert.run(
      id,
      request.runId,
      request.agentId,
      request.callId,
      request.name,
      request.arguments,
      request.class,
      now,
      now + request.timeoutSeconds,
    );
    const outcome = new Promise<ApprovalOutcome>((resolve) => {
      const timer = setTimeout(
        () => this.settle(id, 'timed_out', `No decision within ${request.timeoutSeconds} s (agents_defaults.approval_timeout_seconds).`),
        request.timeoutSeconds * 1000,
      );
      const onAbort = () => this.settle(id, 'cancelled', 'The run was cancelled.');
      request.signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.set(id, (settled) => {
        clearTimeout(timer);
        request.signal.removeEventListener('abort', onAbort);
        resolve(settled);
      });
      if (request.signal.aborted) onAbort();
    });
    return { approval: toApproval(this.statements.get.get(id)!), outcome };
  }

  /** The owner's decision; 404 for an unknown id, 409 when it was already settled. */
  decide(id: string, decision: 'approve' | 'deny', reason?: string): AgentApproval {
    const status = decision === 'approve' ? 'approved' : 'denied';
    if (!this.settle(id, status, reason?.trim() || null)) {
      const row = this.statements.get.get(id);
      if (!row) throw new HearthError('approval_not_found', `No approval has the id "${id}". List pending ones with GET /agents/approvals.`);
      throw new HearthError('approval_decided', `The approval "${id}" is already ${row.status.replace('_', ' ')}.`);
    }
    return toApproval(this.statements.get.get(id)!);
  }

  get(id: string): AgentApproval | undefined {
    const row = this.statements.get.get(id);
    return row ? toApproval(row) : undefined;
  }

  pending(): AgentApproval[] {
    return this.statements.pending.all().map(toApproval);
  }

  /** At start: approvals left pending by a process that ended can never be answered. */
  cancelOrphans(): number {
    return this.statements.orphans.run('Hearth stopped before a decision was made.', unixSeconds()).changes;
  }

  private settle(id: string, status: Exclude<ApprovalStatus, 'pending'>, reason: string | null): boolean {
    const changed = this.statements.settle.run(status, reason, unixSeconds(), id).changes > 0;
    const waiter = this.waiting.get(id);
    if (changed && waiter) {
      this.waiting.delete(id);
      waiter({ decision: status, reason });
    }
    return changed;
  }
}
