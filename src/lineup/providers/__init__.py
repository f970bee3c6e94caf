"""The providers shipped with LineUp: adapters to outside systems, behind
:class:`lineup.core.provider.Provider`."""
