"""A unit-conversion MCP server built with shipcode-mcp.

Run it with ``shipcode-mcp examples/units.py`` (or ``python examples/units.py``); see
README.md beside this file for wiring it into an MCP client.
"""

from __future__ import annotations

from typing import Annotated, Literal

from shipcode_mcp import Server, ToolError

app = Server("units", version="1.0.0", instructions="Convert lengths, masses, volumes and temperatures.")

Unit = Literal["mm", "cm", "m", "km", "in", "ft", "yd", "mi", "g", "kg", "oz", "lb", "ml", "l", "gal", "C", "F", "K"]

#: Linear units: kind and size in the kind's base unit (metre, kilogram, litre).
FACTORS: dict[str, tuple[str, float]] = {
    "mm": ("length", 0.001),
    "cm": ("length", 0.01),
    "m": ("length", 1.0),
    "km": ("length", 1000.0),
    "in": ("length", 0.0254),
    "ft": ("length", 0.3048),
    "yd": ("length", 0.9144),
    "mi": ("length", 1609.344),
    "g": ("mass", 0.001),
    "kg": ("mass", 1.0),
    "oz": ("mass", 0.028349523125),
    "lb": ("mass", 0.45359237),
    "ml": ("volume", 0.001),
    "l": ("volume", 1.0),
    "gal": ("volume", 3.785411784),
}
TEMPERATURES = ("C", "F", "K")


def kind_of(unit: str) -> str:
    """The quantity a unit measures."""
    return "temperature" if unit in TEMPERATURES else FACTORS[unit][0]


def to_kelvin(value: float, unit: str) -> float:
    if unit == "C":
        return value + 273.15
    if unit == "F":
        return (value - 32) * 5 / 9 + 273.15
    return value


def from_kelvin(value: float, unit: str) -> float:
    if unit == "C":
        return value - 273.15
    if unit == "F":
        return (value - 273.15) * 9 / 5 + 32
    return value


@app.tool()
def convert(
    value: Annotated[float, "the quantity to convert"],
    from_unit: Unit,
    to_unit: Unit,
    digits: Annotated[int, "decimal places to round to"] = 6,
) -> float:
    """Convert a quantity from one unit to another of the same kind"""
    if kind_of(from_unit) != kind_of(to_unit):
        raise ToolError(f"cannot convert {from_unit} ({kind_of(from_unit)}) to {to_unit} ({kind_of(to_unit)})")
    if not 0 <= digits <= 15:
        raise ToolError("digits must be between 0 and 15")
    if from_unit in TEMPERATURES:
        kelvin = to_kelvin(value, from_unit)
        if kelvin < 0:
            raise ToolError(f"{value} {from_unit} is below absolute zero")
        result = from_kelvin(kelvin, to_unit)
    else:
        result = value * FACTORS[from_unit][1] / FACTORS[to_unit][1]
    return round(result, digits)


@app.tool(
    output_schema={
        "type": "object",
        "properties": {"kind": {"type": "string"}, "units": {"type": "array", "items": {"type": "string"}}},
        "required": ["kind", "units"],
    }
)
def units(kind: Literal["length", "mass", "volume", "temperature"]) -> dict:
    """List the units of one kind of quantity"""
    return {"kind": kind, "units": [unit for unit in (*FACTORS, *TEMPERATURES) if kind_of(unit) == kind]}


@app.resource("units://table", name="table", mime_type="text/csv", description="Every unit with its kind")
def table() -> str:
    rows = ["unit,kind,size_in_base_unit"]
    rows += [f"{unit},{kind},{size!r}" for unit, (kind, size) in FACTORS.items()]
    rows += [f"{unit},temperature," for unit in TEMPERATURES]
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    app.run()
