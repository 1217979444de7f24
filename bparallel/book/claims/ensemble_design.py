"""The ensembles of the two claims chapters (Sections 2 and 3) and their random streams.

The claims of Section 2 (Theorem 2.8, Eq. 20, Eq. 5, Eqs. 16-19) and of Section 3
(amplification, the mixing-fidelity trade-off) are tested on random ensembles in two
chapters, each placed after its section's theory. The ensembles were first drawn by one
chapter from one generator, section after section, in the order of :data:`SECTIONS`; the
regression references hold those values. :class:`SectionStreams` keeps them: it gives each
section a generator positioned where that single stream stood when the section began, by
replaying the draws of the sections before it (the draws alone, without measuring them:
:func:`~bparallel.book.claims.mixing.theorem_2_8_draws`,
:func:`~bparallel.book.claims.head_sets.head_set_draws`,
:func:`~bparallel.book.claims.fidelity_claims.tradeoff_draws`). A chapter calls
:meth:`SectionStreams.check` after a section to prove it consumed exactly the draws the replay
assumes, so the two can never drift apart silently.

Chapter-support code: it lives in the book layer because only the chapters need it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from ...ensembles import random_head_stacks
from ..render.results import PROFILES
from .fidelity_claims import tradeoff_draws
from .head_sets import head_set_draws
from .mixing import theorem_2_8_draws

#: The sections of the ensemble study, in the order of the original single stream:
#: Theorem 2.8 / Eq. 20 (``bound``) and the head-set mixing search (``mixing``) of Section 2,
#: amplification (``fidelity``) and the trade-off (``tradeoff``) of Section 3, then Eqs. 16-19
#: (``best_head``, Section 2).
SECTIONS = ("bound", "mixing", "fidelity", "tradeoff", "best_head")


@dataclass(frozen=True)
class EnsembleDesign:
    """Sizes, densities and counts of the ensembles, per profile (``quick`` or ``paper``).

    One object serves both claims chapters and the replay of :class:`SectionStreams`, so
    the draws a chapter makes and the draws the replay skips are made from the same numbers.
    """

    profile: str
    # Theorem 2.8 and Eq. 20
    bound_sizes: tuple[int, ...] = (5, 10, 20, 50, 100)
    bound_densities: tuple[float, ...] = (0.05, 0.1, 0.2, 0.5)
    bound_num: int = 100
    # head-set searches (Sections 2.2 and 3.1)
    exhaustive_n: tuple[int, ...] = (3, 4, 5)
    grid_steps: int = 10
    random_sizes: tuple[int, ...] = (6, 8, 10, 15, 20)
    search_densities: tuple[float, ...] = (0.1, 0.2, 0.35, 0.5, 0.7)
    num_pairs: int = 1000
    num_triples: int = 300
    horizons: tuple[int, ...] = (5, 10, 20, 50, 100)
    horizon_sweep_n: int = 8
    # the mixing-fidelity trade-off
    tradeoff_sizes: tuple[int, ...] = (8, 16, 32)
    tradeoff_densities: tuple[float, ...] = (0.05, 0.1, 0.2, 0.35, 0.5, 0.75)
    tradeoff_num: int = 40
    tradeoff_horizon: int = 100
    # Eqs. 16-19
    num_trials: int = 4000

    @classmethod
    def for_profile(cls, profile: str) -> EnsembleDesign:
        """The ``quick`` ensembles (the book) or the ten to twenty times larger ``paper`` ones."""
        if profile == "quick":
            return cls("quick")
        if profile == "paper":
            return cls("paper", bound_num=1000, grid_steps=20, num_pairs=20000,
                       num_triples=3000, tradeoff_num=400, num_trials=40000)
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r}")

    @property
    def mixing_keys(self) -> list[tuple[str, int, int]]:
        """The ``(search, n, H)`` head sets of the mixing search, in draw order."""
        return ([("exhaustive", n, H) for n in self.exhaustive_n for H in (2, 3)
                 if H == 2 or n <= 4]
                + [("random", n, H) for n in (5, *self.random_sizes) for H in (2, 3)
                   if (n, H) != (5, 2)])

    @property
    def fidelity_keys(self) -> list[tuple[str, int, int]]:
        """The ``(search, n, H)`` head sets of the fidelity search, in draw order."""
        return ([("exhaustive", n, H) for n in self.exhaustive_n for H in (2, 3)
                 if H == 2 or n == 4]
                + [("random", n, 2) for n in self.random_sizes])

    @property
    def search_num(self) -> dict[int, int]:
        """Random head sets per search, by number of heads."""
        return {2: self.num_pairs, 3: self.num_triples}

    def draw(self, section: str, rng: np.random.Generator) -> None:
        """Consume exactly the draws the chapters make in ``section`` (see :data:`SECTIONS`),
        without measuring anything. ``best_head`` comes last and is never replayed."""
        if section == "bound":
            for _ in theorem_2_8_draws(self.bound_sizes, self.bound_densities,
                                              self.bound_num, rng):
                pass
        elif section == "mixing":
            for _ in head_set_draws(self.mixing_keys, self.search_num,
                                           self.search_densities, rng):
                pass
        elif section == "fidelity":
            for _ in head_set_draws(self.fidelity_keys, self.num_pairs,
                                           self.search_densities, rng):
                pass
            random_head_stacks(self.num_pairs, 2, self.horizon_sweep_n, self.search_densities,
                               rng)
        elif section == "tradeoff":
            for _ in tradeoff_draws(self.tradeoff_sizes, self.tradeoff_densities,
                                           self.tradeoff_num, rng):
                pass
        else:
            raise ValueError(f"section must be one of {', '.join(SECTIONS[:-1])} (the "
                             f"replayed ones), got {section!r}")


class SectionStreams:
    """One generator per section of :data:`SECTIONS`, each where the single stream stood.

    ``streams = SectionStreams(design, seed)``; ``streams["fidelity"]`` is a
    ``np.random.Generator`` whose state is that of ``np.random.default_rng(seed)`` after the
    draws of ``bound`` and ``mixing`` (the same object on every access). After running a
    section with it, ``streams.check("fidelity")`` raises unless it has consumed exactly that
    section's draws, i.e. stands where the next section's stream begins.
    """

    def __init__(self, design: EnsembleDesign, seed: int) -> None:
        if not isinstance(design, EnsembleDesign):
            raise ValueError(f"design must be an EnsembleDesign, got {type(design).__name__}")
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        rng = np.random.default_rng(int(seed))
        self._start: dict[str, dict] = {}
        for section in SECTIONS:
            self._start[section] = copy.deepcopy(rng.bit_generator.state)
            if section != SECTIONS[-1]:
                design.draw(section, rng)
        self._given: dict[str, np.random.Generator] = {}

    def _known(self, section: str) -> str:
        if section not in self._start:
            raise ValueError(f"section must be one of {', '.join(SECTIONS)}, got {section!r}")
        return section

    def __getitem__(self, section: str) -> np.random.Generator:
        if self._known(section) not in self._given:
            bit_generator = np.random.PCG64()
            bit_generator.state = copy.deepcopy(self._start[section])
            self._given[section] = np.random.Generator(bit_generator)
        return self._given[section]

    def check(self, section: str) -> None:
        """Raise ``RuntimeError`` unless ``section``'s generator now stands where the next
        section's stream starts (the last section has no next and is not checked)."""
        following = SECTIONS.index(self._known(section)) + 1
        if following == len(SECTIONS):
            return
        if section not in self._given:
            raise RuntimeError(f"section {section!r} was never run: its generator was not used")
        if self._given[section].bit_generator.state != self._start[SECTIONS[following]]:
            raise RuntimeError(
                f"section {section!r} drew differently from its replay in "
                "EnsembleDesign.draw: the regression references would no longer hold")

__all__ = ["EnsembleDesign", "SECTIONS", "SectionStreams"]
