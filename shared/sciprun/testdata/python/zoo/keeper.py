"""The keeper feeds the animals."""

from zoo.animals import Animal, Dog, Puppy


def roll_call(animals: list[Animal]) -> list[str]:
    return [a.describe() for a in animals]


def main() -> None:
    for line in roll_call([Dog("Rex"), Puppy("Bit")]):
        print(line)
