"""``series_check``: the analysis a check puts on a series once is the one ``detect`` and
``change_points`` would make themselves."""

from __future__ import annotations

from perfdb import detector
from perfdb.detector import detection, series_check
from perfdb.detector.long_series import analyse
from tests.perfdb.detector.long_series import long_series


def test_the_analysis_the_check_puts_on_a_series_is_the_one_detect_uses():
    """``series_check.analysed_once``: ``analyse`` (uncached: no hash of every point)
    where ``detect`` and ``change_points`` look first; their answers are the plain call's."""
    points = long_series(5)
    settings = detection.Settings()
    analyse.cache_clear()
    usable = series_check.analysed_once(detector.ordered(points), settings)
    analysis = usable.analyses[settings]
    assert series_check.analysed_once(usable, settings).analyses[settings] is analysis  # once
    assert analysis is not None and analysis == analyse(tuple(usable), settings)
    analyse.cache_clear()
    candidates = {p.run_id for p in points[-5:]}
    changes = detection.detect(usable, better="higher", settings=settings, candidates=candidates)
    steps = detection.change_points(usable, better="higher", settings=settings)
    assert analyse.cache_info().currsize == 0  # the check's analysis was used
    assert usable.analyses[settings] is analysis
    assert steps and changes == detection.detect(
        points, better="higher", settings=settings, candidates=candidates
    )
    assert steps == detection.change_points(points, better="higher", settings=settings)
    # a short series goes through analyse's cache: a check run again finds it there
    analyse.cache_clear()
    assert len(points[:50]) < series_check.UNCACHED_FROM <= len(points)
    analysis = series_check.analysed_once(detector.ordered(points[:50]), settings).analyses[
        settings
    ]
    assert analyse.cache_info().currsize == 1
    assert analyse(tuple(detector.ordered(points[:50])), settings) is analysis
