// What is wrong with migration folders, as sentences that say what to do (used by
// test/unit/platform/migration-sequence.test.ts; the rules are in migrations/README.md).

export interface Folder {
  /** The folder under migrations/, as shipped.sha256 names it. */
  name: string;
  files: { file: string; sha256: string }[];
}

const MIGRATION = /^(\d{3})_([a-z0-9_]+)\.sql$/;
const pad = (n: number) => String(n).padStart(3, '0');
const RENUMBER = 'A migration not in migrations/shipped.sha256 takes the next free number: rename it to';

/** `shipped`: the text of migrations/shipped.sha256 (`<sha256>  <folder>/<file>` lines, `#` comments). */
export function problemsOf(folders: readonly Folder[], shipped: string): string[] {
  const recorded = new Map<string, string>();
  for (const line of shipped.split('\n')) {
    const m = /^([0-9a-f]{64}) {2}(\S+)$/.exec(line.trim());
    if (m) recorded.set(m[2]!, m[1]!);
    else if (line.trim() !== '' && !line.startsWith('#')) throw new Error(`migrations/shipped.sha256: not a line of sha256sum: ${line}`);
  }
  const problems: string[] = [];
  for (const { name: folder, files } of folders) {
    const present = new Map(files.map((f) => [f.file, f.sha256]));
    /** Number → the file that holds it; a shipped migration holds its number even when gone. */
    const taken = new Map<number, string>();
    for (const [path, sha256] of recorded) {
      if (!path.startsWith(`${folder}/`)) continue;
      const file = path.slice(folder.length + 1);
      taken.set(Number(MIGRATION.exec(file)?.[1]), `the shipped ${file}`);
      if (!present.has(file)) {
        problems.push(`${path} is recorded as shipped and is gone: a shipped migration is never renamed or removed (databases have applied it under that name)`);
      } else if (present.get(file) !== sha256) {
        problems.push(`${path} was edited after it shipped: databases have applied it as it was; undo the edit and add a new migration`);
      }
    }
    for (const file of [...present.keys()].sort()) {
      if (recorded.has(`${folder}/${file}`)) continue;
      const m = MIGRATION.exec(file);
      if (!m) {
        problems.push(`${folder}/${file}: not a migration name (NNN_lowercase_words.sql); the runner reads every file of the folder`);
        continue;
      }
      const number = Number(m[1]);
      const next = Math.max(0, ...taken.keys()) + 1;
      if (taken.has(number)) {
        problems.push(`${folder}/${file}: ${m[1]} is taken by ${taken.get(number)}. ${RENUMBER} ${pad(next)}_${m[2]}.sql`);
      } else if (number !== next) {
        const run = next > 2 ? '001, 002, …' : '001, …';
        problems.push(`${folder}/${file}: numbers run ${run} without a gap: expected ${pad(next)}. ${RENUMBER} ${pad(next)}_${m[2]}.sql`);
      }
      taken.set(taken.has(number) || number !== next ? next : number, file);
    }
    for (let n = 1; n <= Math.max(0, ...taken.keys()); n++) {
      if (!taken.has(n)) problems.push(`${folder}: no migration is numbered ${pad(n)} (a gap among the shipped ones)`);
    }
  }
  return problems;
}
