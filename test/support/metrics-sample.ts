/** A sample of /metrics: the value of the series of `name` carrying these labels (undefined: none). */
export function sample(metrics: string, name: string, labels: Record<string, string>): number | undefined {
  const line = metrics
    .split('\n')
    .find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}
