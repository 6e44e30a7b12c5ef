"""The foundations layer: what everything above stands on, with no side effect but storage.

store/  runs, trials, samples on SQLite or PostgreSQL (SQLAlchemy, Alembic revisions)
stats/  statistics: pure functions of sample lists (descriptions, decisions, corrections)
model/  the typed result model every report renders (pydantic), and its JSON Schema

May import core only; its packages are one level.
"""
