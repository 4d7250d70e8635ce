"""Benchmarks, run as ``python -m benchmarks.<name>`` (``make bench``).

"Yesterday" in a prompt is a day of the machine's time zone by default; the
benchmarks read days in UTC, so that their figures do not depend on where they run.
"""

import os
import time

os.environ["TZ"] = "UTC"
if hasattr(time, "tzset"):  # not on Windows
    time.tzset()
