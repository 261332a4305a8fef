"""The keeper."""

from zoo.animals import Animal


def roll_call(animals: list[Animal]) -> list[str]:
    return [a.speak() for a in animals]
