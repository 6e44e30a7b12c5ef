"""The result model: what analysis makes and every report format renders (pydantic).

run.py       a run's report: run, its headline (headline.py), benchmarks, environments, results (with the comparison
             against their reference), trials, warnings, method notes, published figures
decision.py  a result against its reference: the decision, published rule, order effect
claims.py    the study's claims, checked; its own figures and tables ([[figure]], [[table]])
profile.py   exit profiles
pricelist.py the primitives' price list
compare.py   two runs side by side
differences.py what differs between two environments: facts with both values
density.py   a density sweep: curves, knees, stop reasons
tune.py      a tune run: design, effects decided, recommendation, confirmation
base.py      the base record (reads as a mapping too)

The JSON report is `model_dump()` of these; its JSON Schema is generated from them
(`python -m virtbench.foundations.model --schema`) and checked in as docs/report.schema.json.
It imports nothing of virtbench above the base layer.
"""
from .base import Number, Record
from .claims import ClaimLink, ClaimResult, DeclaredView
from .decision import DisturbedTrial, OrderEffect, PublishedRule
from .compare import CompareRow, Comparison, MetadataDifference
from .differences import Fact, PairDifferences
from .profile import Explained, FunctionRow, Profile, ReasonRow
from .pricelist import FamilySentence, PriceCell, PriceExit, PriceList, PriceRow
from .headline import Headline, HeadlineItem, HeadlineSummary
from .tune import (TuneConfiguration, TuneDesign, TuneEffect, TuneRecommendation,
                   TuneReport, TuneStep)
from .run import (
    AdaptiveSummary,
    Case,
    EnvironmentRecord,
    EvidenceValue,
    FailedTrial,
    HostRun,
    MethodNote,
    MetricIdentity,
    ProfilesReport,
    PublishedFigure,
    PublishedMatch,
    Result,
    RunInfo,
    RunReport,
    RunWarning,
    SCHEMA_VERSION,
    WarningGroup,
    Section,
    TrialCount,
    VsReference,
)

__all__ = ["DeclaredView", "Number", "Record", "ClaimLink", "ClaimResult", "DisturbedTrial",
           "OrderEffect", "PublishedRule", "CompareRow", "Comparison", "MetadataDifference", "Fact", "PairDifferences", "Explained",
           "FunctionRow", "Profile", "ReasonRow", "Case", "EnvironmentRecord", "EvidenceValue",
           "FailedTrial", "Headline", "HeadlineItem", "HeadlineSummary", "HostRun", "MethodNote", "MetricIdentity", "ProfilesReport",
           "PublishedFigure", "PublishedMatch", "Result", "RunInfo", "RunReport",
           "RunWarning", "WarningGroup", "SCHEMA_VERSION", "Section", "AdaptiveSummary",
           "TrialCount",
           "VsReference", "FamilySentence",
           "PriceCell", "PriceExit", "PriceList", "PriceRow", "TuneConfiguration",
           "TuneDesign", "TuneEffect", "TuneRecommendation", "TuneReport", "TuneStep"]
