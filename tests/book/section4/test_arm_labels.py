"""The three tables that name chapter 12's arms on a page (its words, its speed sentences,
its figures' line styles) name exactly the arms of the Transformer floor
(:data:`bparallel.transformer.arms.ARMS`), in its order: an arm added, renamed or dropped
there fails here until every table says it."""

from bparallel.book.render.plotting.experiment import ARM_STYLE
from bparallel.book.section4.graph_learning import SPEED_PLACES
from bparallel.book.section4.models import ARM_NAMES
from bparallel.transformer.arms import ARMS


def test_every_table_of_arm_labels_names_the_arms_in_their_order():
    for table in (ARM_NAMES, SPEED_PLACES, ARM_STYLE):
        assert tuple(table) == ARMS


def test_the_labels_are_distinct_and_the_styles_tell_the_arms_apart():
    for labels in (ARM_NAMES.values(), SPEED_PLACES.values()):
        assert len(set(labels)) == len(ARMS)
    assert len({(ls, marker) for ls, marker, _ in ARM_STYLE.values()}) == len(ARMS)
    for arm, (_, _, label) in ARM_STYLE.items():  # a figure's legend says the page's name
        assert label.startswith(ARM_NAMES[arm]), (arm, label)
