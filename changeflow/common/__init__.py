"""Values shared by every API: rows, row kinds, types and configuration (PyFlink's names)."""

from changeflow.common.configuration import Configuration
from changeflow.common.row import Row
from changeflow.common.row_kind import RowKind
from changeflow.common.serialization import Encoder, SimpleStringSchema
from changeflow.common.time import Duration, Instant, Time
from changeflow.common.typeinfo import Types
from changeflow.common.types import DataType, DataTypes
from changeflow.common.watermark_strategy import WatermarkStrategy

__all__ = ["Configuration", "DataType", "DataTypes", "Duration", "Encoder", "Instant", "Row", "RowKind",
           "SimpleStringSchema", "Time", "Types", "WatermarkStrategy"]
