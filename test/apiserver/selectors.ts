/**
 * Label and field selectors, as the API server evaluates them: equality-based (`a=b`, `a==b`,
 * `a!=b`, `a`, `!a`) and, for labels, set-based `a in (x,y)` / `a notin (x,y)`; comma = AND.
 * `a!=b` and `notin` match objects without the key, as on the real server.
 */
type Lookup = (key: string) => string | undefined;

/** Splits a selector at the commas outside parentheses (`a in (x,y),b` is two terms). */
function termsOf(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === '(') depth += 1;
    else if (c === ')') depth -= 1;
    else if (c === ',' && depth === 0) {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms.map((t) => t.trim()).filter((t) => t !== '');
}

function matchesTerm(term: string, lookup: Lookup): boolean {
  const set = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term);
  if (set !== null) {
    const values = new Set(set[3]!.split(',').map((v) => v.trim()));
    const value = lookup(set[1]!);
    return set[2] === 'in' ? value !== undefined && values.has(value) : value === undefined || !values.has(value);
  }
  const neq = /^([^!=]+)!=(.*)$/.exec(term);
  if (neq !== null) return lookup(neq[1]!.trim()) !== neq[2]!.trim();
  const eq = /^([^!=]+)==?(.*)$/.exec(term);
  if (eq !== null) return lookup(eq[1]!.trim()) === eq[2]!.trim();
  if (term.startsWith('!')) return lookup(term.slice(1).trim()) === undefined;
  return lookup(term) !== undefined;
}

function matches(selector: string | undefined, lookup: Lookup): boolean {
  if (selector === undefined || selector.trim() === '') return true;
  return termsOf(selector).every((term) => matchesTerm(term, lookup));
}

export function matchesLabelSelector(selector: string | undefined, labels: Record<string, string> | undefined): boolean {
  return matches(selector, (key) => labels?.[key]);
}

/**
 * Field paths like `metadata.name`, `spec.nodeName`, `status.podIP`. An absent field is the
 * empty string, as on the real server (`spec.nodeName=` selects unscheduled pods).
 */
export function matchesFieldSelector(selector: string | undefined, object: Record<string, unknown>): boolean {
  return matches(selector, (path) => {
    let value: unknown = object;
    for (const part of path.split('.')) {
      if (value === null || typeof value !== 'object') return '';
      value = (value as Record<string, unknown>)[part];
    }
    return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
  });
}
