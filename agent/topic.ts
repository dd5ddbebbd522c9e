/**
 * A typed publish/subscribe seam between the agent's runnables: a runnable publishes what it
 * learned (a pod changed, a transition was planned, a pod's conntrack was flushed) and
 * agent.ts subscribes the runnables that react, so none of them holds another's internals.
 */
export class Topic<T> {
  private readonly listeners: Array<(value: T) => void> = [];

  subscribe(listener: (value: T) => void): void {
    this.listeners.push(listener);
  }

  publish(value: T): void {
    for (const listener of this.listeners) listener(value);
  }
}
