/** "1 lead", "1,250 leads": a count with its noun, for the console and the CLI alike. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}
