/**
 * PromQL checks with Prometheus' own grammar (@prometheus-io/lezer-promql, the parser of the
 * Prometheus UI): syntax errors, and the metric names an expression reads.
 */
import { parser } from '@prometheus-io/lezer-promql';

export interface PromqlReport {
  errors: string[];
  metrics: string[];
}

export function analysePromql(expr: string): PromqlReport {
  const tree = parser.parse(expr);
  const errors: string[] = [];
  const metrics = new Set<string>();
  const cursor = tree.cursor();
  do {
    const node = cursor.node;
    if (node.type.isError) {
      errors.push(`syntax error at ${node.from}: "${expr.slice(Math.max(0, node.from - 20), node.to + 20)}"`);
    } else if (node.name === 'VectorSelector') {
      const identifier = node.getChild('Identifier');
      if (identifier !== null) metrics.add(expr.slice(identifier.from, identifier.to));
      // {__name__="x"} selectors name their metric in a matcher.
      const nameMatch = /__name__\s*=\s*"([^"]+)"/.exec(expr.slice(node.from, node.to));
      if (nameMatch?.[1] !== undefined) metrics.add(nameMatch[1]);
    }
  } while (cursor.next());
  return { errors, metrics: [...metrics].sort() };
}

/**
 * Grafana's query variables, replaced by values PromQL accepts so the dashboard's
 * expressions can be parsed as Prometheus will receive them.
 */
export function substituteGrafanaVariables(expr: string): string {
  return expr
    .replace(/\$__(rate_interval|interval|range)\b/g, '5m')
    .replace(/\$\{(\w+)(:\w+)?\}|\$(\w+)/g, '.*');
}
