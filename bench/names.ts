/** Deterministic, realistic-looking names for seeding (a fixed PRNG, so runs are comparable). */
const FIRST = ['Ada', 'Grace', 'Alan', 'Linus', 'Margaret', 'Dennis', 'Barbara', 'Ken', 'Frances', 'Edsger', 'Radia', 'Tim', 'Katherine', 'John', 'Hedy', 'Donald', 'Shafi', 'Leslie', 'Sophie', 'Guido', 'Anita', 'Bjarne', 'Carol', 'Niklaus', 'Mary', 'James', 'Joan', 'Robert', 'Lynn', 'Brian', 'Evelyn', 'Ivan', 'Jean', 'Martin', 'Elena', 'Pierre', 'Amara', 'Yuki', 'Chen', 'Priya', 'Omar', 'Fatima', 'Lars', 'Ingrid', 'Mateo', 'Lucia', 'Kwame', 'Zanele', 'Hiro', 'Anja'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Torvalds', 'Hamilton', 'Ritchie', 'Liskov', 'Thompson', 'Allen', 'Dijkstra', 'Perlman', 'Berners-Lee', 'Johnson', 'McCarthy', 'Lamarr', 'Knuth', 'Goldwasser', 'Lamport', 'Wilson', 'van Rossum', 'Borg', 'Stroustrup', 'Shaw', 'Wirth', 'Keller', 'Gosling', 'Clarke', 'Kahn', 'Conway', 'Kernighan', 'Boyd', 'Sutherland', 'Sammet', 'Fowler', 'Petrova', 'Dubois', 'Okafor', 'Tanaka', 'Wang', 'Sharma', 'Haddad', 'Rahman', 'Nilsson', 'Berg', 'Garcia', 'Romero', 'Mensah', 'Ndlovu', 'Sato', 'Kowalski'];
const SUFFIX = ['', '', '', 'son', 'sen', 'ez', 'ini', 'ova', 'ski', 'ton', 'field', 'wood', 'ley', 'er', 'mann', 'berg', 'stein', 'dale', 'ford', 'worth'];

export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function nameAt(i: number, rand: () => number): string {
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
  return `${pick(FIRST)} ${pick(LAST)}${pick(SUFFIX)} ${String.fromCharCode(65 + (i % 26))}.`;
}
