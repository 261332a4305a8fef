"""Animals and their sounds."""


class Animal:
    """Animal is anything that speaks."""

    def __init__(self, name: str) -> None:
        self.name = name

    def speak(self) -> str:
        return "..."

    def describe(self) -> str:
        return f"{self.name} says {self.speak()}"


class Dog(Animal):
    """Dog barks."""

    def speak(self) -> str:
        return "woof"


class Puppy(Dog):
    """Puppy yips."""

    def speak(self) -> str:
        return "yip"
