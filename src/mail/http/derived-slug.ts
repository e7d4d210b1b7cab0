// A slug for a topic or template created without one (Resend's topics have none,
// its templates' alias is optional; /api/v1 names both by slug): the name lower-cased,
// runs of anything but a-z and 0-9 turned into one "-", at most 56 characters,
// "topic" when nothing is left; "-2", "-3"… when the organization has it already.
export function slugOf(name: string): string {
  const base = name.normalize('NFKD').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 56).replace(/-+$/, '');
  return base || 'topic';
}

/** The n-th candidate for `base` (n = 1: the base itself). */
export const slugCandidate = (base: string, n: number): string => (n === 1 ? base : `${base}-${n}`);
