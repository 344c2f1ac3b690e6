"""Split a document into chunks by headings and paragraphs, measured in the embedder's tokens.

A document is read as Markdown: ATX (``# Title``) and setext headings open
sections, blank lines separate paragraphs, and fenced code stays one block.
Each chunk belongs to one section and starts with that section's heading path
("Guide > Install"), so a chunk read alone still says what it is about; the
heading counts against the chunk's token budget.

Within a section, whole paragraphs are packed while they fit. A paragraph that
does not fit is split into sentences (or lines), a sentence that does not fit
into words. When a chunk is full, the next one starts with the last whole
sentences of the previous one, up to ``overlap_tokens``.

Token counts add up: the embedder's pre-tokeniser splits on whitespace and
punctuation, so a text's token count is the sum of its pieces' counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

# Counts the embedder's tokens of each text, special tokens excluded.
TokenCounter = Callable[[Sequence[str]], list[int]]

HEADING_SEPARATOR = " > "
# No optional closing run in the pattern: ``(.*?)[ \t]*#*[ \t]*$`` backtracks cubically
# on a run of spaces inside the title; :func:`_atx_title` strips the run instead.
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*)$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# A sentence ends at . ! or ? followed by whitespace; a line break also ends a unit,
# so list items and table rows are never glued together.
_SENTENCE_END = re.compile(r"(?<=[.!?])[ \t]+|\n")


@dataclass(frozen=True)
class Chunk:
    """One piece of a document, ready to embed and index."""

    ordinal: int
    heading: str
    text: str
    token_count: int

    @property
    def indexed_text(self) -> str:
        """What is embedded and analysed for BM25: the heading path, then the text."""
        return f"{self.heading}\n\n{self.text}" if self.heading else self.text


@dataclass
class _Section:
    path: list[str]
    blocks: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Unit:
    """A sentence (or line, or word run) and what separates it from the next unit.

    A unit costs at least one token: text the tokenizer reads as none (U+200B, U+00AD,
    a lone combining accent) once filled one chunk without end, and the overlap walked
    back over all of it (2 MB of "\u200b\n\n" took 73 s to ingest)."""

    text: str
    tokens: int
    separator: str

    def __post_init__(self) -> None:
        if self.tokens < 1:
            object.__setattr__(self, "tokens", 1)


def _atx_title(rest: str) -> str:
    """An ATX heading's text without its closing run: trailing blanks, ``#`` s, blanks."""
    return rest.rstrip(" \t").rstrip("#").rstrip(" \t")


def parse_sections(text: str) -> list[_Section]:
    """Markdown → sections, each with its heading path and its paragraphs and code blocks."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    sections = [_Section([])]
    stack: list[tuple[int, str]] = []
    paragraph: list[str] = []
    fence: str | None = None

    def flush() -> None:
        block = "\n".join(paragraph).strip("\n")
        if block.strip():
            sections[-1].blocks.append(block)
        paragraph.clear()

    def open_section(level: int, title: str) -> None:
        flush()
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title.strip()))
        sections.append(_Section([t for _, t in stack if t]))

    for line in lines:
        if fence is not None:
            paragraph.append(line)
            if line.strip().startswith(fence):
                fence = None
                flush()
            continue
        if match := _FENCE.match(line):
            flush()
            fence = match.group(1)[:3]
            paragraph.append(line)
        elif match := _ATX.match(line):
            open_section(len(match.group(1)), _atx_title(match.group(2)))
        elif len(paragraph) == 1 and _SETEXT.match(line) and paragraph[0].strip():
            title = paragraph.pop()
            open_section(1 if line.strip().startswith("=") else 2, title)
        elif not line.strip():
            flush()
        else:
            paragraph.append(line.rstrip())
    flush()
    return sections


class Chunker:
    """Turns text into :class:`Chunk` s of at most ``chunk_tokens`` tokens."""

    def __init__(self, count_tokens: TokenCounter, chunk_tokens: int, overlap_tokens: int) -> None:
        if not 0 <= overlap_tokens < chunk_tokens:
            raise ValueError("overlap_tokens must be at least 0 and below chunk_tokens")
        self._count = count_tokens
        self.chunk_tokens = chunk_tokens
        self.overlap_tokens = overlap_tokens

    def split(self, text: str) -> list[Chunk]:
        sections = [s for s in parse_sections(text) if s.blocks]
        if not sections:
            # Only headings: they are the content.
            titles = [line.strip("# \t") for line in text.splitlines() if line.strip("# \t")]
            sections = [_Section([], ["\n".join(titles)])] if titles else []
        chunks: list[Chunk] = []
        fitted: dict[tuple[str, ...], tuple[str, int]] = {}
        shortened: dict[str, str] = {}
        for section in sections:
            key = tuple(section.path)
            if key not in fitted:
                heading = self._fit_heading([self._short(t, shortened) for t in key])
                fitted[key] = (heading, self._count([heading])[0] if heading else 0)
            heading, heading_tokens = fitted[key]
            budget = self.chunk_tokens - heading_tokens
            for body, tokens in self._pack(section.blocks, budget):
                chunks.append(Chunk(len(chunks), heading, body, heading_tokens + tokens))
        return chunks

    def _short(self, title: str, known: dict[str, str]) -> str:
        """``title`` cut to the heading's limit, counted once per document: a long title
        over many small sections was tokenized whole for each (64 KB took 51 s)."""
        if title not in known:
            limit = self.chunk_tokens // 4
            fits = self._count([title])[0] <= limit
            known[title] = title if fits else self._cut_to_tokens(title, limit)
        return known[title]

    def _fit_heading(self, path: list[str]) -> str:
        """The heading path, shortened from the top until it takes at most a quarter of a chunk."""
        limit = self.chunk_tokens // 4
        for start in range(len(path)):
            heading = HEADING_SEPARATOR.join(path[start:])
            if self._count([heading])[0] <= limit:
                return heading
        if not path:
            return ""
        return self._cut_to_tokens(path[-1], limit)

    def _cut_to_tokens(self, text: str, limit: int) -> str:
        words = text.split()
        counts = self._count(words)
        kept, total = [], 0
        for word, count in zip(words, counts, strict=True):
            if total + count > limit:
                break
            kept.append(word)
            total += count
        return " ".join(kept)

    # --- packing ---------------------------------------------------------------------------------

    def _paragraph_units(self, blocks: list[str], budget: int) -> list[list[_Unit]]:
        """Each block as a list of units no longer than ``budget``, with exact token counts."""
        block_counts = self._count(blocks)
        paragraphs: list[list[_Unit]] = []
        for block, count in zip(blocks, block_counts, strict=True):
            if count <= budget:
                paragraphs.append([_Unit(block, count, "\n\n")])
                continue
            paragraphs.append(self._split_block(block, budget))
        return paragraphs

    def _split_block(self, block: str, budget: int) -> list[_Unit]:
        pieces: list[tuple[str, str]] = []
        position = 0
        for match in _SENTENCE_END.finditer(block):
            piece = block[position : match.start()]
            if piece.strip():
                pieces.append((piece.strip(), "\n" if match.group() == "\n" else " "))
            position = match.end()
        if block[position:].strip():
            pieces.append((block[position:].strip(), " "))
        counts = self._count([p for p, _ in pieces])
        units: list[_Unit] = []
        for (piece, separator), count in zip(pieces, counts, strict=True):
            if count <= budget:
                units.append(_Unit(piece, count, separator))
            else:
                units.extend(self._split_words(piece, budget, separator))
        if units:
            last = units[-1]
            units[-1] = _Unit(last.text, last.tokens, "\n\n")
        return units

    def _split_words(self, sentence: str, budget: int, separator: str) -> list[_Unit]:
        words = sentence.split()
        counts = self._count(words)
        units: list[_Unit] = []
        run: list[str] = []
        run_tokens = 0
        pieces: list[tuple[str, int]] = []
        for word, count in zip(words, counts, strict=True):
            if count <= budget:
                pieces.append((word, count))
            else:  # one enormous "word" (a hash, base64): cut it by characters
                pieces.extend(self._split_characters(word, budget))
        for word, count in pieces:
            if run and run_tokens + count > budget:
                units.append(_Unit(" ".join(run), run_tokens, " "))
                run, run_tokens = [], 0
            run.append(word)
            run_tokens += count
        if run:
            units.append(_Unit(" ".join(run), run_tokens, separator))
        return units

    def _split_characters(self, word: str, budget: int) -> list[tuple[str, int]]:
        """Longest prefixes of ``word`` that fit ``budget``, one after the other."""
        pieces: list[tuple[str, int]] = []
        guess = budget  # about one character per token, then the previous piece's length
        while word:
            length, tokens = self._longest_prefix(word, budget, guess)
            pieces.append((word[:length], tokens))
            word, guess = word[length:], length
        return pieces

    def _longest_prefix(self, word: str, budget: int, guess: int) -> tuple[int, int]:
        """The longest prefix of ``word`` within ``budget`` near ``guess`` characters:
        ``(length, tokens)``. Galloping away from the guess, then bisecting, keeps every
        probe within about twice the answer (or the guess), so cutting a long word costs
        time in proportion to its length, not its length squared.
        """
        counts: dict[int, int] = {}

        def fits(length: int) -> bool:
            if length not in counts:
                counts[length] = self._count([word[:length]])[0]
            return counts[length] <= budget

        low, high, step = 1, min(max(guess, 1), len(word)), 1
        if fits(high):  # gallop up from the guess: ``low`` fits, ``high`` is past the end
            low, high = high, len(word) + 1
            while low + step < high and fits(low + step):
                low, step = low + step, step * 2
            high = min(high, low + step) - 1
        else:  # gallop down: ``high`` does not fit
            while high - step >= 1 and not fits(high - step):
                high, step = high - step, step * 2
            low, high = max(high - step, 1), high - 1
        while low < high:  # bisect: the largest length in [low, high] that fits
            middle = (low + high + 1) // 2
            if fits(middle):
                low = middle
            else:
                high = middle - 1
        fits(low)
        return low, counts[low]

    def _pack(self, blocks: list[str], budget: int) -> list[tuple[str, int]]:
        """Greedy packing of paragraphs (whole when possible) into chunks of ``budget`` tokens."""
        chunks: list[tuple[str, int]] = []
        current: list[_Unit] = []
        used = 0
        carried = 0  # leading units of ``current`` repeated from the previous chunk

        def emit() -> None:
            nonlocal current, used, carried
            chunks.append((_join(current), used))
            current = self._overlap(current)
            used = sum(u.tokens for u in current)
            carried = len(current)

        for paragraph in self._paragraph_units(blocks, budget):
            paragraph_tokens = sum(u.tokens for u in paragraph)
            # Rather than break a paragraph that fits whole in a chunk of its own, start
            # that chunk now, unless the current one is still mostly empty.
            if (
                len(current) > carried
                and used + paragraph_tokens > budget
                and used >= budget // 2
                and paragraph_tokens <= budget
            ):
                emit()
            for unit in paragraph:
                if len(current) > carried and used + unit.tokens > budget:
                    emit()
                while current and used + unit.tokens > budget:  # the overlap leaves no room
                    used -= current.pop(0).tokens
                    carried -= 1
                current.append(unit)
                used += unit.tokens
        if len(current) > carried:
            chunks.append((_join(current), used))
        return chunks

    def _overlap(self, units: list[_Unit]) -> list[_Unit]:
        """The last whole units of a chunk that fit in the overlap (never the whole chunk)."""
        tail: list[_Unit] = []
        total = 0
        for unit in reversed(units):
            if total + unit.tokens > self.overlap_tokens:
                break
            tail.insert(0, unit)
            total += unit.tokens
        return tail if len(tail) < len(units) else []


def _join(units: list[_Unit]) -> str:
    parts: list[str] = []
    for i, unit in enumerate(units):
        parts.append(unit.text)
        if i < len(units) - 1:
            parts.append(unit.separator)
    return "".join(parts).strip()
