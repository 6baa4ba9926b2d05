import { applyEdits } from '../../../machines/edit/edit-apply.ts';

describe('applyEdits', () => {
  it('applies edits sequentially, each against the previous result', () => {
    const r = applyEdits('a\nb\nc\n', [
      { oldText: 'b', newText: 'B\nb2' },
      { oldText: 'b2\nc', newText: 'C' },
    ]);
    expect(r).toEqual({
      content: 'a\nB\nC\n',
      outcomes: [
        {
          index: 0,
          matchKind: 'exact',
          similarity: 1,
          range: { start: 2, end: 3 },
          startLine: 2,
          endLine: 2,
          inserted: 'B\nb2',
        },
        {
          index: 1,
          matchKind: 'exact',
          similarity: 1,
          range: { start: 4, end: 8 },
          startLine: 3,
          endLine: 4,
          inserted: 'C',
        },
      ],
    });
  });

  it('keeps the edits before a failing one and reports the exact no-match text', () => {
    const r = applyEdits('one\ntwo\n', [
      { oldText: 'one', newText: 'ONE' },
      { oldText: 'three', newText: 'THREE' },
      { oldText: 'two', newText: 'TWO' },
    ]);
    expect(r.content).toBe('ONE\ntwo\n');
    expect(r.outcomes.map((o) => o.index)).toEqual([0]);
    expect(r.failure).toEqual({
      index: 1,
      reason: 'unresolved',
      message:
        'Could not find matching text for edit at index 1. The old_text did not match ' +
        'any content in the file. Please read the file again to get the current content.',
    });
  });

  it('adds the stale-read sentence when the file changed since it was read', () => {
    expect(applyEdits('x\n', [{ oldText: 'y', newText: 'z' }], { stale: true }).failure?.message).toBe(
      'Could not find matching text for edit at index 0. The old_text did not match any content in the file. ' +
        'The file has changed on disk since you last read it. Please read the file again to get the current content.',
    );
  });

  it('ambiguity lists 1-based lines', () => {
    expect(applyEdits('a\nx\nb\nx\n', [{ oldText: 'x', newText: 'y' }]).failure).toEqual({
      index: 0,
      reason: 'ambiguous',
      lines: [2, 4],
      message:
        'Edit 0 matched multiple locations in the file at lines: 2, 4. Please ' +
        'provide more context in old_text to uniquely identify the location.',
    });
  });

  it('ambiguity on one line (a minified file) names the columns', () => {
    expect(applyEdits('f(a);g(a);\n', [{ oldText: '(a)', newText: '(b)' }]).failure?.message).toBe(
      'Edit 0 matched multiple locations in the file at lines: 1 (column 2), 1 (column 7). Please ' +
        'provide more context in old_text to uniquely identify the location.',
    );
  });

  it('refuses empty old_text, a no-op and an empty edit list', () => {
    expect(applyEdits('a', [{ oldText: '', newText: 'b' }]).failure?.message).toBe(
      'Could not find matching text for edit at index 0. The old_text is empty. Put ' +
        'the lines to replace in old_text, or use write_file to replace the whole file.',
    );
    expect(applyEdits('a', [{ oldText: 'a', newText: 'a' }]).failure?.message).toBe(
      'Edit 0 makes no change: old_text and new_text are identical. Put the replacement text in new_text.',
    );
    expect(applyEdits('a', []).failure?.message).toBe(
      'The edits array is empty. Give at least one { "old_text", "new_text" } edit.',
    );
  });

  it('re-indents a fuzzy match by the first-line delta and the agreed rest delta', () => {
    const buffer = 'class A {\n    m() {\n        return 1;\n    }\n}\n';
    const r = applyEdits(buffer, [
      { oldText: 'm() {\n    return 1;\n}', newText: 'm() {\n    if (x) {\n        return 2;\n    }\n}' },
    ]);
    expect(r.content).toBe('class A {\n    m() {\n        if (x) {\n            return 2;\n        }\n    }\n}\n');
    expect(r.outcomes[0]).toMatchObject({ matchKind: 'fuzzy', similarity: 1, startLine: 2, endLine: 4 });
  });

  it("handles a model that stripped only the first line's indent", () => {
    const buffer = 'fn x() {\n    let a = 1;\n    let b = 2;\n}\n';
    const r = applyEdits(buffer, [{ oldText: 'let a = 1;\n    let b = 2;', newText: 'let a = 10;\n    let b = 20;' }]);
    // exact match (mid-line start): first line keeps the retained prefix, rest delta 0
    expect(r.content).toBe('fn x() {\n    let a = 10;\n    let b = 20;\n}\n');
  });

  it('drops one trailing newline of new_text when the range is followed by a newline', () => {
    expect(applyEdits('a\nb\nc\n', [{ oldText: 'b\n', newText: 'B\n' }]).content).toBe('a\nB\nc\n');
    expect(applyEdits('a\nb\nc\n', [{ oldText: 'b', newText: 'B\nB2\n' }]).content).toBe('a\nB\nB2\nc\n');
  });

  it('writes tabs into a tab-indented file when the model used spaces', () => {
    const buffer = 'func main() {\n\tif ok {\n\t\trun()\n\t}\n}\n';
    const r = applyEdits(buffer, [
      { oldText: '    if ok {\n        run()\n    }', newText: '    if ok {\n        run()\n        log()\n    }' },
    ]);
    expect(r.content).toBe('func main() {\n\tif ok {\n\t\trun()\n\t\tlog()\n\t}\n}\n');
  });

  it('never writes normalized text: smart quotes in the query match, the file keeps what new_text says', () => {
    const buffer = 'const s = "hi";\nconst n = 1;\n';
    const r = applyEdits(buffer, [
      { oldText: 'const s = \u201chi\u201d;\nconst n = 1;', newText: 'const s = "hello";\nconst n = 1;' },
    ]);
    expect(r.content).toBe('const s = "hello";\nconst n = 1;\n');
    expect(r.outcomes[0]!.matchKind).toBe('fuzzy');
  });
});
