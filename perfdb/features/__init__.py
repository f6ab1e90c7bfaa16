"""What the product tells about stored runs beyond a series and its alerts.

Each module is one feature, its rule pure where it can be (values in, an answer out) and
its database side next to it: ``claims`` checks a stated change ("+4.7 % against the
baseline") against the values, ``claim_checks`` resolves a claim's sides to stored runs and
keeps the verdict; ``reference`` holds an alert back while a reference kernel re-run on the
same machine moved too; ``attribution`` names which patch of a stack moved a metric;
``profile_diff`` lists the kernel functions that moved between two profiles. They read the
model and the detector's statistics; alerting and the pages call them, never the reverse.
"""
