/** The value of one series in a Prometheus text exposition (0 when absent). */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const found = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!found) continue;
    const have = Object.fromEntries([...(found[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(found[2]);
  }
  return 0;
}
