/**
 * Where the agent is in its life, shared by the runnables that behave differently while it
 * hands over or stops (docs/handover.md).
 */
import type { StateOwner } from './state-file.js';

export class AgentPhase {
  /** stop() began: no new plan run, no new IPVS pass. */
  stopping = false;
  /** SIGTERM: the listeners are closed; held calls are answered as their drains end. */
  handingOver = false;
  /** A newer instance owns the state file: this one no longer writes it. */
  supersededBy: StateOwner | undefined;
  /** Whether this instance edits IPVS (set by the IPVS runnable to its ownership; handover/ipvs-ownership.ts). */
  ipvsEditor: { readonly owns: boolean } = { owns: true };

  /**
   * Handing over to a newer instance that is connected: it runs the plan (IPVS hold, ghost
   * cleanup) for the node; this one only answers its held calls (the watch still ends drains
   * of pods that go). Without a newer instance (plain SIGTERM) it keeps holding until it exits.
   */
  get yielded(): boolean {
    return this.handingOver && this.supersededBy !== undefined && !this.ipvsEditor.owns;
  }
}
