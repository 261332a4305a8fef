"""Animals."""


class Animal:
    """Animal is anything that speaks."""

    def speak(self) -> str:
        return "..."
