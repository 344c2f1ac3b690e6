"""The chunker on real text with the embedder's real tokenizer."""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence

import pytest

from reach_common.embeddings import Embedder
from retriever.ingest.chunking import Chunk, Chunker, TokenCounter, parse_sections
from retriever.ingest.service import token_counter

GUIDE = """# Guide

A short introduction.

## Install

Run the installer. It takes a minute. Then check the version with the command below. \
If it fails, read the log. The log lives in the data folder. Restart after changes to \
the configuration file, because settings are read once at start.

```bash
make install

make run
```

Setext heading
--------------

- item one
- item two
"""


@pytest.fixture(scope="module")
def count(embedder: Embedder) -> TokenCounter:
    return token_counter(embedder)


def test_sections_follow_headings_and_keep_code_fences_whole() -> None:
    sections = [(s.path, s.blocks) for s in parse_sections(GUIDE) if s.blocks]
    assert sections == [
        (["Guide"], ["A short introduction."]),
        (
            ["Guide", "Install"],
            [
                GUIDE.split("\n\n")[3],
                "```bash\nmake install\n\nmake run\n```",
            ],
        ),
        (["Guide", "Setext heading"], ["- item one\n- item two"]),
    ]


def test_chunks_carry_their_heading_path_and_exact_token_counts(count: TokenCounter) -> None:
    chunker = Chunker(count, 254, 32)
    chunks = chunker.split(GUIDE)
    assert [c.heading for c in chunks] == [
        "Guide",
        "Guide > Install",
        "Guide > Setext heading",
    ]
    assert chunks[1].text.endswith("make run\n```")
    for chunk in chunks:
        assert chunk.token_count == count([chunk.indexed_text])[0]
    assert [c.ordinal for c in chunks] == [0, 1, 2]


def test_long_paragraphs_split_at_sentences_with_overlap(count: TokenCounter) -> None:
    sentences = [f"Sentence number {i} talks about topic {i} in some detail." for i in range(40)]
    chunker = Chunker(count, 64, 16)
    chunks = chunker.split(" ".join(sentences))
    assert len(chunks) > 5
    for chunk in chunks:
        assert chunk.token_count <= 64
        assert chunk.token_count == count([chunk.indexed_text])[0]
        assert chunk.text.endswith(".")  # never cut inside a sentence
    for previous, current in itertools.pairwise(chunks):
        last_sentence = previous.text.split(". ")[-1]
        assert current.text.startswith(last_sentence)  # the overlap repeats it
    # Every sentence survives, in order.
    joined = " ".join(c.text for c in chunks)
    positions = [joined.find(s) for s in sentences]
    assert all(p >= 0 for p in positions)


def test_without_overlap_nothing_repeats(count: TokenCounter) -> None:
    sentences = [f"Fact {i} is stated here plainly." for i in range(30)]
    chunks = Chunker(count, 40, 0).split(" ".join(sentences))
    assert " ".join(c.text for c in chunks) == " ".join(sentences)


def test_paragraph_that_fits_moves_to_a_fresh_chunk(count: TokenCounter) -> None:
    first = "Alpha beta gamma delta. " * 6
    second = "Epsilon zeta eta theta. " * 6
    chunks = Chunker(count, 50, 0).split(f"{first.strip()}\n\n{second.strip()}")
    assert [c.text for c in chunks] == [first.strip(), second.strip()]


def test_huge_words_and_heading_only_documents(count: TokenCounter) -> None:
    chunker = Chunker(count, 40, 8)
    blob = "-".join(str(i) for i in range(200))  # one "word" of ~400 tokens
    chunks = chunker.split(blob)
    assert len(chunks) > 1
    assert "".join(c.text for c in chunks) == blob
    assert all(c.token_count <= 40 for c in chunks)
    [only] = chunker.split("# Title\n\n## Subtitle")
    assert only.text == "Title\nSubtitle"


def test_overlap_must_be_below_chunk_size(count: TokenCounter) -> None:
    with pytest.raises(ValueError, match="overlap"):
        Chunker(count, 32, 32)


@pytest.mark.parametrize(
    ("line", "path"),
    [
        ("# Title #", ["Title"]),
        ("## Title ##  ", ["Title"]),
        ("# C#", ["C"]),
        ("#no", None),
        ("   ### x", ["x"]),
        ("    # code", None),
        ("####### seven", None),
        ("# a # b #", ["a # b"]),
        ("#\tTab\t#\t", ["Tab"]),
        ("# a ##x", ["a ##x"]),
        ("#  #  #", ["#"]),
    ],
)
def test_atx_headings_and_their_closing_hashes(line: str, path: list[str] | None) -> None:
    sections = parse_sections(f"{line}\n\nbody")
    if path is None:  # not a heading: the line is text
        assert [(s.path, s.blocks) for s in sections] == [([], [line.rstrip(), "body"])]
    else:
        assert [(s.path, s.blocks) for s in sections] == [([], []), (path, ["body"])]


def test_a_run_of_blanks_in_a_heading_parses_in_linear_time() -> None:
    """The heading pattern once backtracked cubically on inner blanks: 12 s for this line."""
    started = time.perf_counter()
    sections = parse_sections("# a" + " " * 2500 + "b\n\n" + "# c" + " \t" * 100_000 + "d ##")
    assert time.perf_counter() - started < 0.5
    assert [s.path for s in sections] == [
        [],
        ["a" + " " * 2500 + "b"],
        ["c" + " \t" * 100_000 + "d"],
    ]


def split_counting(count: TokenCounter, text: str) -> tuple[int, list[Chunk]]:
    """The characters tokenised to chunk ``text`` (254 tokens, 32 of overlap), and the chunks."""
    tokenised = 0

    def counting(texts: Sequence[str]) -> list[int]:
        nonlocal tokenised
        tokenised += sum(len(t) for t in texts)
        return count(texts)

    chunks = Chunker(counting, 254, 32).split(text)
    return tokenised, chunks


def test_cutting_a_long_word_is_linear(count: TokenCounter) -> None:
    """A word without blanks (minified JSON, 'a.a.a.') is cut by probing prefixes; the
    characters tokenised grow with the word, not with its square (once 16x for 4x)."""
    work: dict[int, int] = {}

    def split(length: int) -> list[Chunk]:
        work[length], chunks = split_counting(count, "a." * (length // 2))
        return chunks

    small, large = split(20_000), split(80_000)
    assert work[80_000] < 6 * work[20_000], work
    for chunks, length in ((small, 20_000), (large, 80_000)):
        assert "".join(c.text for c in chunks) == "a." * (length // 2)
        assert max(c.token_count for c in chunks) <= 254
        assert max(count([c.indexed_text for c in chunks])) <= 254


def test_a_long_title_over_many_small_sections_is_read_once(count: TokenCounter) -> None:
    """Each section's heading path was tokenized whole, the long ancestor title with it:
    a 64 KB document of one long title and small sections took 51 s."""
    work: dict[int, int] = {}

    def split(length: int) -> list[Chunk]:
        title = "# " + "word " * (length // 10) + "\n"
        sections = "".join(f"## part {i}\nbody {i}\n" for i in range(length // 40))
        work[length], chunks = split_counting(count, title + sections)
        return chunks

    split(8_000)
    large = split(32_000)
    assert work[32_000] < 6 * work[8_000], work
    assert max(c.token_count for c in large) <= 254
    assert large[-1].heading.endswith(f"part {32_000 // 40 - 1}")


def test_text_the_tokenizer_counts_as_nothing_still_fills_chunks(count: TokenCounter) -> None:
    """A zero-width space is no blank to str.strip() and no token to the tokenizer: such
    paragraphs never filled a chunk, so one chunk took them all (2 MB took 73 s)."""
    words = " ".join(f"w{i}" for i in range(200))
    text = words + "\n\n" + "\u200b\n\n" * 50_000 + words
    chunks = Chunker(count, 254, 32).split(text)
    assert len(chunks) > 100
    assert max(len(c.text) for c in chunks) < 5_000
