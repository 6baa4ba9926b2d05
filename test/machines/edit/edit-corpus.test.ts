import { CORPUS_FILES, loadCorpusFile, makeCases, runCase, runCorpus } from '../../support/edit-corpus.ts';
import { propertySeed } from '../../support/seed.ts';

const seed = propertySeed();

describe(`edit corpus: real files, model-like perturbations (seed ${seed})`, () => {
  it('every edit lands exactly where intended or fails clearly; never elsewhere; ≥ 97% land byte-exact', () => {
    const r = runCorpus(seed, 40);
    expect(r.cases).toBe(CORPUS_FILES.length * 40);
    expect({ wrong: r.wrong, failures: r.failures.filter((f) => f.startsWith('wrong')) }).toEqual({
      wrong: 0,
      failures: [],
    });
    for (const f of r.failures.filter((x) => x.startsWith('failed'))) {
      expect(f).toMatch(
        /(Could not find matching text for edit at index 0\.|Edit 0 matched multiple locations in the file at lines: )/,
      );
    }
    // The benchmark reports the rate against the 98% target on 1100 fixed-seed cases; this run (440 random-seed cases)
    // guards regressions.
    expect(r.exact / r.cases).toBeGreaterThanOrEqual(0.97);
  });

  it('an unperturbed span always lands byte-exact (exact match path)', () => {
    const f = CORPUS_FILES[0]!;
    const buffer = loadCorpusFile(f);
    const cases = makeCases(f.name, buffer, seed, 30).filter((c) => c.perturbations.includes('none'));
    for (const c of cases) expect(runCase(c).outcome).toBe('exact');
  });
});
