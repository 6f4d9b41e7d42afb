"""The project's exception for problems of the environment (not of the caller's arguments)."""


class ChemtebError(RuntimeError):
    """Something outside the arguments is wrong: offline, missing data, missing extra.

    The message always says what to do next. Bad arguments raise ``ValueError`` instead.
    """
