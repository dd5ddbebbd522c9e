/**
 * Equality-based label and field selectors, as the API server evaluates them
 * (`a=b`, `a==b`, `a!=b`, `a`, `!a`, comma = AND). Set-based selectors are not needed here.
 */
type Lookup = (key: string) => string | undefined;

function matches(selector: string | undefined, lookup: Lookup): boolean {
  if (selector === undefined || selector.trim() === '') return true;
  for (const raw of selector.split(',')) {
    const term = raw.trim();
    if (term === '') continue;
    const neq = /^([^!=]+)!=(.*)$/.exec(term);
    const eq = /^([^!=]+)==?(.*)$/.exec(term);
    if (neq !== null) {
      if (lookup(neq[1]!.trim()) === neq[2]!.trim()) return false;
    } else if (eq !== null) {
      if (lookup(eq[1]!.trim()) !== eq[2]!.trim()) return false;
    } else if (term.startsWith('!')) {
      if (lookup(term.slice(1).trim()) !== undefined) return false;
    } else if (lookup(term) === undefined) {
      return false;
    }
  }
  return true;
}

export function matchesLabelSelector(selector: string | undefined, labels: Record<string, string> | undefined): boolean {
  return matches(selector, (key) => labels?.[key]);
}

/** Field paths like `metadata.name`, `spec.nodeName`, `status.podIP`. */
export function matchesFieldSelector(selector: string | undefined, object: Record<string, unknown>): boolean {
  return matches(selector, (path) => {
    let value: unknown = object;
    for (const part of path.split('.')) {
      if (value === null || typeof value !== 'object') return undefined;
      value = (value as Record<string, unknown>)[part];
    }
    return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
  });
}
