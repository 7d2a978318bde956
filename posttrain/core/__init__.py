"""Layer 0: the records, errors, registry and config every other package builds on."""

from .config import RunConfig, config_hash, load_config
from .errors import (ConfigError, EnvError, ErrorInfo, InferenceError, MissingExtraError,
                     PosttrainError, RegistryError, SandboxError, SchedulerError, VerifierError)
from .registry import Registry, split_id
from .serde import dumps, from_dict, loads, to_dict
from .types import (Action, Completion, Message, Observation, Score, StepResult, Task, Trajectory,
                    TrajectoryGroup, Turn)

__all__ = [
    "Action", "Completion", "ConfigError", "EnvError", "ErrorInfo", "InferenceError", "Message",
    "MissingExtraError", "Observation", "PosttrainError", "Registry", "RegistryError", "RunConfig",
    "SandboxError", "SchedulerError", "Score", "StepResult", "Task", "Trajectory",
    "TrajectoryGroup", "Turn", "VerifierError", "config_hash", "dumps", "from_dict", "load_config",
    "loads", "split_id", "to_dict",
]
