"""One fake Cooked for the shopping-list tests, reset to seed data before each test.

Every test here talks real HTTP to that fake on 127.0.0.1; a guard on the socket layer
refuses any other host for the whole package, so no test can reach the real Cooked.
"""

from __future__ import annotations
