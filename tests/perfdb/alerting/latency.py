"""A latency series (lower is better) that steps up at 2.6.191, uploaded kernel by kernel:
the alert that moves onto a pending or cleared one (a helper, not a test module)."""

from __future__ import annotations

from ingest.services import upload_create, upload_ingest
from perfdb.models import Alert
from tests.bundles import make_bundle, manifest_toml, volano_run
from tests.perfdb.alerting.builds import check

LATENCY = [
    (1263, 1308, 1260, 1227, 1248),
    (1223, 1250, 1280, 1268, 1215),
    (1235, 1251, 1283, 1271, 1275),
    (1322, 1281, 1259, 1240, 1310),
    (1244, 1267, 1259, 1312, 1260),
    (1316, 1278, 1300, 1223, 1303),
    (1266, 1276, 1230, 1250, 1209),
    (1265, 1186, 1276, 1285, 1266),
    (1264, 1270, 1266, 1231, 1266),
    (1275, 1221, 1261, 1266, 1251),
    (1281, 1217, 1247, 1254, 1242),
    (1294, 1271, 1244, 1276, 1288),
    (1223, 1224, 1291, 1223, 1276),
    (1261, 1301, 1239, 1294, 1243),
    (1284, 1261, 1226, 1293, 1263),
    (1263, 1266, 1194, 1211, 1251),
    (1243, 1239, 1258, 1227, 1306),
    (1253, 1259, 1229, 1273, 1305),
    (1293, 1272, 1255, 1282, 1250),
    (1402, 1427, 1407, 1424, 1436),  # 2.6.191: the step (confirmed here first)
    (1346, 1364, 1341, 1379, 1357),  # 2.6.192: where the scan places it at the end
    (1402, 1397, 1379, 1394, 1394),
    (1428, 1399, 1397, 1391, 1373),
    (1403, 1354, 1381, 1441, 1391),
    (1431, 1383, 1376, 1471, 1370),
    (1413, 1402, 1417, 1349, 1387),
    (1404, 1442, 1350, 1386, 1398),
    (1422, 1382, 1434, 1384, 1358),
    (1408, 1393, 1369, 1406, 1408),
]
METRIC = '\n[metric.latency]\nunit = "ms"\nbetter = "lower"\n'


def kernel(index: int) -> str:
    return f"2.6.{172 + index}"


def upload_kernels(tmp_path, first: int, end: int, checked: bool = True):
    """Kernels ``first``..``end - 1`` of the series in one bundle, ingested and (unless
    ``checked`` is False) checked."""
    runs = [
        volano_run(kernel(i), extra=f"metrics = {{ latency = {list(LATENCY[i])} }}")
        for i in range(first, end)
    ]
    name = f"k{first}-{end}.tar.gz"
    path = make_bundle(tmp_path / name, {"manifest.toml": manifest_toml(*runs) + METRIC})
    with open(path, "rb") as stream:
        made, _ = upload_create(stream=stream, filename=name)
    upload_ingest(upload_id=made.pk)
    made.refresh_from_db()
    assert made.status == "done", made.error
    if checked:
        check(made)
    return made


def latency_alerts():
    return Alert.objects.filter(metric__name="latency", direction="regression")
